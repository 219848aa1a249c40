"""Reports: plots, and the pages and summaries a person reads after a campaign."""
