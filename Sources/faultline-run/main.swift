// faultline-run: runs a program with crash reporting and sessions, without changing it (docs/sdk.md).
// CONTRACT (owner: launcher helper): placeholder.
import FaultlineSDK

print("faultline-run: not built yet")
