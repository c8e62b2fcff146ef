"""Statistics over a run's verdicts: intervals, stability across trials, paired comparison, power.

Pure functions over plain sequences and rows (no files, no servers); the batch layer, the report and
`appworld-green compare` call them. The numerical work is scipy's and statsmodels': Wilson intervals
(`statsmodels.stats.proportion.proportion_confint`), the scenario-aware intervals (statsmodels'
cluster-robust OLS covariance, scipy's t quantile, Wilson and Clopper-Pearson), the paired permutation test over scenarios
(`scipy.stats.permutation_test`) and the power calculation (`statsmodels.stats.power.TTestPower`).
scipy and statsmodels are imported inside the functions that use them: the CLI imports every
subcommand at start-up, and a second of imports should not slow `appworld-green battle`.
Every random draw comes from a generator seeded by `IntervalOptions.seed`: the same files give the
same intervals.
"""
