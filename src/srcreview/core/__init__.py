"""The base every stage stands on: errors, records, safe text, user files, dates, shipped data."""
