/// Apple crash reports written by hand from Apple's documented formats ("Interpreting the JSON format of a crash
/// report", "Examining the fields in a crash report"), one crash in both spellings: `Demo` 2.1 (42) on an iPhone 14
/// Pro (`iPhone15,2`), iOS 17.2 (21C62), reading address 0x10 in `parse` (parser.c:12).
///
/// The addresses agree between the two: `Demo` at 0x102b84000 (`imageOffset` 33188 → 0x102b8c1a4, 32924 → 0x102b8c09c),
/// dyld at 0x1a1c20000 (+24220), libsystem_kernel at 0x1ce4c8000 (+4084).
public enum AppleCrashSamples {
    public static let incident = "6156848E-344E-4D9E-84E0-87AFD0D0AE7B"
    public static let appUUID = "4C4C4473-5555-3144-A157-542D2ECDA82A"
    public static let appBuildID = "4c4c447355553144a157542d2ecda82a"
    public static let appBase: UInt64 = 0x1_02b8_4000
    public static let crashReporterKey = "76f2fb60060d6a7f814973377cbdc866fffd521f"

    /// An `.ips` (bug_type 309) as an iPhone writes it, abridged only in values nobody reads.
    public static func ips(
        incident: String = incident, header: String? = nil, threads: String? = nil, images: String? = nil,
        extra: String = ""
    ) -> String {
        let headerLine =
            header ?? """
                {"app_name":"Demo","timestamp":"2026-11-20 10:33:51.00 +0100","app_version":"2.1","slice_uuid":"4c4c4473-5555-3144-a157-542d2ecda82a","adam_id":"0","build_version":"42","platform":2,"bundleID":"com.example.demo","share_with_app_devs":0,"is_first_party":0,"bug_type":"309","os_version":"iPhone OS 17.2 (21C62)","roots_installed":0,"name":"Demo","incident_id":"\(incident)"}
                """
        let threadList =
            threads ?? """
                [{"triggered":true,"id":4242,"threadState":{"x":[{"value":0},{"value":16}],"flavor":"ARM_THREAD_STATE64","lr":{"value":4340629660},"cpsr":{"value":1610612736},"fp":{"value":6094848000},"sp":{"value":6094847968},"esr":{"value":2449473542,"description":"(Data Abort) byte read Translation fault"},"pc":{"value":4340629924,"matchesCrashFrame":1},"far":{"value":16}},"queue":"com.apple.main-thread","frames":[{"imageOffset":33188,"symbol":"parse","symbolLocation":40,"imageIndex":0,"sourceFile":"parser.c","sourceLine":12},{"imageOffset":32924,"imageIndex":0},{"imageOffset":24220,"symbol":"start","symbolLocation":2360,"imageIndex":1}]},
                    {"id":4243,"name":"worker","frames":[{"imageOffset":4084,"symbol":"mach_msg2_trap","symbolLocation":8,"imageIndex":2}]}]
                """
        let imageList =
            images ?? """
                [
                    {"source":"P","arch":"arm64e","base":4340596736,"size":49152,"uuid":"4c4c4473-5555-3144-a157-542d2ecda82a","path":"/private/var/containers/Bundle/Application/51346174-37EF-4F60-B72D-8DE5F01035F5/Demo.app/Demo","name":"Demo"},
                    {"source":"P","arch":"arm64e","base":7008813056,"size":536384,"uuid":"0cd1a5e8-2a3b-3c4d-9e5f-60718293a4b5","path":"/usr/lib/dyld","name":"dyld"},
                    {"source":"P","arch":"arm64e","base":7756087296,"size":233472,"uuid":"b2e8c4d6-e3e0-3c2d-9b0d-8e6d5b3d0a1f","path":"/usr/lib/system/libsystem_kernel.dylib","name":"libsystem_kernel.dylib"},
                    {"size":0,"source":"A","base":0,"uuid":"00000000-0000-0000-0000-000000000000"}
                  ]
                """
        return headerLine + "\n" + """
            {
              "uptime" : 12000,
              "procRole" : "Foreground",
              "version" : 2,
              "userID" : 501,
              "deployVersion" : 210,
              "modelCode" : "iPhone15,2",
              "coalitionID" : 603,
              "osVersion" : {"isEmbedded" : true, "train" : "iPhone OS 17.2", "releaseType" : "User", "build" : "21C62"},
              "captureTime" : "2026-11-20 10:33:51.4969 +0100",
              "incident" : "\(incident)",
              "pid" : 1052,
              "cpuType" : "ARM-64",
              "roots_installed" : 0,
              "bug_type" : "309",
              "procLaunch" : "2026-11-20 10:33:31.7593 +0100",
              "procStartAbsTime" : 290012345,
              "procExitAbsTime" : 290212345,
              "procName" : "Demo",
              "procPath" : "/private/var/containers/Bundle/Application/51346174-37EF-4F60-B72D-8DE5F01035F5/Demo.app/Demo",
              "bundleInfo" : {"CFBundleShortVersionString" : "2.1", "CFBundleVersion" : "42", "CFBundleIdentifier" : "com.example.demo", "DTAppStoreToolsBuild" : "15C500b"},
              "storeInfo" : {"deviceIdentifierForVendor" : "F2A1C3D4-0000-4000-8000-000000000001", "thirdParty" : true},
              "parentProc" : "launchd",
              "parentPid" : 1,
              "coalitionName" : "com.example.demo",
              "crashReporterKey" : "\(crashReporterKey)",
              "wasUnlockedSinceBoot" : 1,
              "isLocked" : 0,
              "codeSigningID" : "com.example.demo",
              "codeSigningTeamID" : "ABCDE12345",
              "exception" : {"codes":"0x0000000000000001, 0x0000000000000010","rawCodes":[1,16],"type":"EXC_BAD_ACCESS","signal":"SIGSEGV","subtype":"KERN_INVALID_ADDRESS at 0x0000000000000010"},
              "termination" : {"flags":0,"code":11,"namespace":"SIGNAL","indicator":"Segmentation fault: 11","byProc":"exc handler","byPid":1052},
              "vmregioninfo" : "0x10 is not in any region.",
              "faultingThread" : 0,\(extra)
              "threads" : \(threadList),
              "usedImages" : \(imageList),
              "sharedCache" : {"base":6744768512,"size":3947528192,"uuid":"e2e3a8d9-0d8e-3b8b-9f7e-b4b2c4c8e1a0"},
              "vmSummary" : "ReadOnly portion of Libraries: Total=1.2G resident=0K(0%)",
              "legacyInfo" : {"threadTriggered" : {"queue" : "com.apple.main-thread"}},
              "trialInfo" : {"rollouts":[],"experiments":[]}
            }
            """
    }

    /// The same crash as the classic text report (what Xcode's Organizer and older devices write).
    public static func crash(
        incident: String = incident, threads: String? = nil, images: String? = nil, header: String = ""
    ) -> String {
        let threadText =
            threads ?? """
                Thread 0 name:  Dispatch queue: com.apple.main-thread
                Thread 0 Crashed:
                0   Demo                          \t0x0000000102b8c1a4 parse + 40 (parser.c:12)
                1   Demo                          \t0x0000000102b8c09c 0x102b84000 + 32924
                2   dyld                          \t0x00000001a1c25e9c start + 2360

                Thread 1 name:  worker
                Thread 1:
                0   libsystem_kernel.dylib        \t0x00000001ce4c8ff4 mach_msg2_trap + 8

                Thread 0 crashed with ARM Thread State (64-bit):
                    x0: 0x0000000000000000   x1: 0x0000000000000010
                    fp: 0x000000016b4a8000   lr: 0x0000000102b8c09c
                    sp: 0x000000016b4a7fe0   pc: 0x0000000102b8c1a4 cpsr: 0x60000000
                   far: 0x0000000000000010  esr: 0x92000006 (Data Abort) byte read Translation fault
                """
        let imageText =
            images ?? """
                       0x102b84000 -        0x102b8ffff Demo arm64e  <4c4c447355553144a157542d2ecda82a> /private/var/containers/Bundle/Application/51346174-37EF-4F60-B72D-8DE5F01035F5/Demo.app/Demo
                       0x1a1c20000 -        0x1a1ca2f3f dyld arm64e  <0cd1a5e82a3b3c4d9e5f60718293a4b5> /usr/lib/dyld
                       0x1ce4c8000 -        0x1ce500fff libsystem_kernel.dylib arm64e  <b2e8c4d6e3e03c2d9b0d8e6d5b3d0a1f> /usr/lib/system/libsystem_kernel.dylib
                """
        return """
            Incident Identifier: \(incident)
            CrashReporter Key:   \(crashReporterKey)
            Hardware Model:      iPhone15,2
            Process:             Demo [1052]
            Path:                /private/var/containers/Bundle/Application/51346174-37EF-4F60-B72D-8DE5F01035F5/Demo.app/Demo
            Identifier:          com.example.demo
            Version:             42 (2.1)
            AppStoreTools:       15C500b
            Code Type:           ARM-64 (Native)
            Role:                Foreground
            Parent Process:      launchd [1]
            Coalition:           com.example.demo [603]
            \(header)
            Date/Time:           2026-11-20 10:33:51.4969 +0100
            Launch Time:         2026-11-20 10:33:31.7593 +0100
            OS Version:          iPhone OS 17.2 (21C62)
            Release Type:        User
            Report Version:      104

            Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
            Exception Subtype: KERN_INVALID_ADDRESS at 0x0000000000000010
            Exception Codes: 0x0000000000000001, 0x0000000000000010
            VM Region Info: 0x10 is not in any region.
            Termination Reason: SIGNAL 11 Segmentation fault: 11
            Terminating Process: exc handler [1052]

            Triggered by Thread:  0

            \(threadText)

            Binary Images:
            \(imageText)

            EOF
            """
    }
}

extension AppleCrashSamples {
    /// `ips(incident:)` grown to exactly `bytes` bytes by a `"padding"` string of escaped quotes (`\"`, 2 bytes each,
    /// which storing the file as a JSON string doubles), so that a test can stand just below or above a size limit.
    public static func ips(incident: String = incident, bytes: Int) -> [UInt8] {
        let empty = ips(incident: incident, extra: "\n  \"padding\" : \"\",").utf8.count
        precondition(bytes >= empty, "an .ips is at least \(empty) bytes")
        let room = bytes - empty
        let pad = String(repeating: #"\""#, count: room / 2) + String(repeating: "x", count: room % 2)
        let file = Array(ips(incident: incident, extra: "\n  \"padding\" : \"\(pad)\",").utf8)
        precondition(file.count == bytes)
        return file
    }
}
