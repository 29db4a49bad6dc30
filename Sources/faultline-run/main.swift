// faultline-run: runs a program with crash reporting and sessions, without changing it (docs/sdk.md).
FaultlineRun.main()
