// The Swift program the SDK's end-to-end tests run. Placeholder (owners: sdk helpers).
import FaultlineSDK

Faultline.start()
