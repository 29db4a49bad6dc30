/// Apple's machine ids (`hw.machine`: `iPhone15,2`) as the names people know ("iPhone 14 Pro"), for devices of the
/// last several years. SDKs send the id; the pages show the name beside it. An id missing from the table is shown as
/// sent, so a new device is never hidden, only not yet named.
public enum AppleDeviceNames {
    /// The marketing name of `machine`, or nil when the table does not know it.
    public static func name(of machine: String) -> String? {
        table[machine.trimmingSpaces]
    }

    /// How a device model is shown: `iPhone 14 Pro (iPhone15,2)` when named, the model as sent otherwise;
    /// a simulator says so.
    public static func display(model: String, simulator: Bool? = nil) -> String {
        let named = name(of: model).map { "\($0) (\(model))" } ?? model
        return simulator == true ? "\(named), simulator" : named
    }

    static let table: [String: String] = {
        var out: [String: String] = [:]
        for (name, ids) in groups {
            for id in ids { out[id] = name }
        }
        return out
    }()

    /// Names and their machine ids. Public knowledge (Apple's support pages list each model's identifier).
    static let groups: [(String, [String])] = [
        // iPhone
        ("iPhone 8", ["iPhone10,1", "iPhone10,4"]), ("iPhone 8 Plus", ["iPhone10,2", "iPhone10,5"]),
        ("iPhone X", ["iPhone10,3", "iPhone10,6"]), ("iPhone XS", ["iPhone11,2"]),
        ("iPhone XS Max", ["iPhone11,4", "iPhone11,6"]),
        ("iPhone XR", ["iPhone11,8"]), ("iPhone 11", ["iPhone12,1"]), ("iPhone 11 Pro", ["iPhone12,3"]),
        ("iPhone 11 Pro Max", ["iPhone12,5"]), ("iPhone SE (2nd generation)", ["iPhone12,8"]),
        ("iPhone 12 mini", ["iPhone13,1"]),
        ("iPhone 12", ["iPhone13,2"]), ("iPhone 12 Pro", ["iPhone13,3"]), ("iPhone 12 Pro Max", ["iPhone13,4"]),
        ("iPhone 13 Pro", ["iPhone14,2"]), ("iPhone 13 Pro Max", ["iPhone14,3"]), ("iPhone 13 mini", ["iPhone14,4"]),
        ("iPhone 13", ["iPhone14,5"]), ("iPhone SE (3rd generation)", ["iPhone14,6"]), ("iPhone 14", ["iPhone14,7"]),
        ("iPhone 14 Plus", ["iPhone14,8"]), ("iPhone 14 Pro", ["iPhone15,2"]), ("iPhone 14 Pro Max", ["iPhone15,3"]),
        ("iPhone 15", ["iPhone15,4"]), ("iPhone 15 Plus", ["iPhone15,5"]), ("iPhone 15 Pro", ["iPhone16,1"]),
        ("iPhone 15 Pro Max", ["iPhone16,2"]), ("iPhone 16 Pro", ["iPhone17,1"]), ("iPhone 16 Pro Max", ["iPhone17,2"]),
        ("iPhone 16", ["iPhone17,3"]), ("iPhone 16 Plus", ["iPhone17,4"]), ("iPhone 16e", ["iPhone17,5"]),
        ("iPhone 17 Pro", ["iPhone18,1"]), ("iPhone 17 Pro Max", ["iPhone18,2"]), ("iPhone 17", ["iPhone18,3"]),
        ("iPhone Air", ["iPhone18,4"]),
        // iPad
        ("iPad (6th generation)", ["iPad7,5", "iPad7,6"]), ("iPad (7th generation)", ["iPad7,11", "iPad7,12"]),
        ("iPad (8th generation)", ["iPad11,6", "iPad11,7"]), ("iPad (9th generation)", ["iPad12,1", "iPad12,2"]),
        ("iPad (10th generation)", ["iPad13,18", "iPad13,19"]), ("iPad (A16)", ["iPad15,7", "iPad15,8"]),
        ("iPad mini (5th generation)", ["iPad11,1", "iPad11,2"]),
        ("iPad mini (6th generation)", ["iPad14,1", "iPad14,2"]),
        ("iPad mini (A17 Pro)", ["iPad16,1", "iPad16,2"]), ("iPad Air (3rd generation)", ["iPad11,3", "iPad11,4"]),
        ("iPad Air (4th generation)", ["iPad13,1", "iPad13,2"]),
        ("iPad Air (5th generation)", ["iPad13,16", "iPad13,17"]),
        ("iPad Air 11-inch (M2)", ["iPad14,8", "iPad14,9"]), ("iPad Air 13-inch (M2)", ["iPad14,10", "iPad14,11"]),
        ("iPad Air 11-inch (M3)", ["iPad15,3", "iPad15,4"]), ("iPad Air 13-inch (M3)", ["iPad15,5", "iPad15,6"]),
        ("iPad Pro 11-inch (1st generation)", ["iPad8,1", "iPad8,2", "iPad8,3", "iPad8,4"]),
        ("iPad Pro 12.9-inch (3rd generation)", ["iPad8,5", "iPad8,6", "iPad8,7", "iPad8,8"]),
        ("iPad Pro 11-inch (2nd generation)", ["iPad8,9", "iPad8,10"]),
        ("iPad Pro 12.9-inch (4th generation)", ["iPad8,11", "iPad8,12"]),
        ("iPad Pro 11-inch (3rd generation)", ["iPad13,4", "iPad13,5", "iPad13,6", "iPad13,7"]),
        ("iPad Pro 12.9-inch (5th generation)", ["iPad13,8", "iPad13,9", "iPad13,10", "iPad13,11"]),
        ("iPad Pro 11-inch (4th generation)", ["iPad14,3", "iPad14,4"]),
        ("iPad Pro 12.9-inch (6th generation)", ["iPad14,5", "iPad14,6"]),
        ("iPad Pro 11-inch (M4)", ["iPad16,3", "iPad16,4"]), ("iPad Pro 13-inch (M4)", ["iPad16,5", "iPad16,6"]),
        // Mac (Apple silicon)
        ("MacBook Air (M1, 2020)", ["MacBookAir10,1"]), ("MacBook Pro (13-inch, M1, 2020)", ["MacBookPro17,1"]),
        ("Mac mini (M1, 2020)", ["Macmini9,1"]), ("iMac (24-inch, M1, 2021)", ["iMac21,1", "iMac21,2"]),
        ("MacBook Pro (14-inch, 2021)", ["MacBookPro18,3", "MacBookPro18,4"]),
        ("MacBook Pro (16-inch, 2021)", ["MacBookPro18,1", "MacBookPro18,2"]),
        ("Mac Studio (2022)", ["Mac13,1", "Mac13,2"]), ("MacBook Air (M2, 2022)", ["Mac14,2"]),
        ("MacBook Pro (13-inch, M2, 2022)", ["Mac14,7"]), ("Mac mini (2023)", ["Mac14,3", "Mac14,12"]),
        ("MacBook Pro (14-inch, 2023)", ["Mac14,5", "Mac14,9"]),
        ("MacBook Pro (16-inch, 2023)", ["Mac14,6", "Mac14,10"]),
        ("MacBook Air (15-inch, M2, 2023)", ["Mac14,15"]), ("MacBook Pro (14-inch, M3, Nov 2023)", ["Mac15,3"]),
        ("MacBook Air (13-inch, M3, 2024)", ["Mac15,12"]), ("MacBook Air (15-inch, M3, 2024)", ["Mac15,13"]),
        // Apple Watch
        ("Apple Watch Series 5", ["Watch5,1", "Watch5,2", "Watch5,3", "Watch5,4"]),
        ("Apple Watch SE", ["Watch5,9", "Watch5,10", "Watch5,11", "Watch5,12"]),
        ("Apple Watch Series 6", ["Watch6,1", "Watch6,2", "Watch6,3", "Watch6,4"]),
        ("Apple Watch Series 7", ["Watch6,6", "Watch6,7", "Watch6,8", "Watch6,9"]),
        ("Apple Watch SE (2nd generation)", ["Watch6,10", "Watch6,11", "Watch6,12", "Watch6,13"]),
        ("Apple Watch Series 8", ["Watch6,14", "Watch6,15", "Watch6,16", "Watch6,17"]),
        ("Apple Watch Ultra", ["Watch6,18"]),
        ("Apple Watch Series 9", ["Watch7,1", "Watch7,2", "Watch7,3", "Watch7,4"]),
        ("Apple Watch Ultra 2", ["Watch7,5"]),
        ("Apple Watch Series 10", ["Watch7,8", "Watch7,9", "Watch7,10", "Watch7,11"]),
        // Apple TV
        ("Apple TV HD", ["AppleTV5,3"]), ("Apple TV 4K", ["AppleTV6,2"]),
        ("Apple TV 4K (2nd generation)", ["AppleTV11,1"]),
        ("Apple TV 4K (3rd generation)", ["AppleTV14,1"]),
        // Apple Vision Pro
        ("Apple Vision Pro", ["RealityDevice14,1"]),
    ]
}
