"""Reviews across revisions: what changed between two, and where a verdict changes."""
