"""The data a review is about and produces: recipes, revisions, findings."""
