// An example app that crashes on request (docs/sdk.md). Placeholder (owner: sdk-context helper).
import FaultlineSDK

Faultline.start()
