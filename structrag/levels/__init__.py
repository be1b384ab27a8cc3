"""Level reconstruction: level-wise memory, predictors, baselines (DESIGN.md §2.3)."""
