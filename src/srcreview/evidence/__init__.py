"""Start-up evidence: what a start-up log of the pinned tree would show for each knob, and a
real log read against the review."""
