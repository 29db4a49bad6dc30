import FaultlineCore
import Foundation
import Symbolication
import TestSupport
import Testing

/// The stack walker on real crashed processes (see `SelfDump`): the walked and symbolicated frames equal the
/// program's call chain, and each frame says how it was found.
@Suite struct StackWalkTests {
    /// Every module's own file, as the process mapped it (the test runs the program on this machine).
    let walker = StackWalker { module in FileManager.default.fileExists(atPath: module.path) ? module.path : nil }

    /// The crashing thread of a program built with `unwinding`, walked, and its frames' function names.
    func walkCrash(_ unwinding: SelfDump.Unwinding) throws -> (thread: WalkedThread, names: [String]) {
        let folder = try TempFolder("walk-\(unwinding.rawValue)")
        let crash = try SelfDump.crash(unwinding, in: folder)
        let thread = try #require(walker.walk(crash.snapshot).first)
        return (thread, try SelfDump.functions(thread.frames, modules: crash.snapshot.modules))
    }

    @Test func cfiWalkGivesTheCallChainThroughAnInlinedFunction() throws {
        let (thread, names) = try walkCrash(.cfi)
        #expect(Array(names.prefix(4)) == SelfDump.callChain, "\(names)")
        // The crash context, then CFI all the way to the outermost frame (_start's CFI ends the stack).
        #expect(thread.frames.first?.trust == .context)
        #expect(thread.frames.dropFirst().allSatisfy { $0.trust == .cfi }, "\(thread.frames)")
        #expect(thread.end == .outermost)
        #expect(names.contains("_start"), "\(names)")
    }

    @Test func framePointersWalkWhereThereIsNoCFI() throws {
        let (thread, names) = try walkCrash(.framePointer)
        #expect(Array(names.prefix(4)) == SelfDump.callChain, "\(names)")
        // crash, outer and main have no CFI: their callers were found through the frame-pointer chain.
        #expect(thread.frames.prefix(3).map(\.trust) == [.context, .framePointer, .framePointer], "\(thread.frames)")
    }

    @Test func aScanFindsTheCallersWhenCFIAndFramePointersBothFail() throws {
        let (thread, names) = try walkCrash(.none)
        #expect(Array(names.prefix(4)) == SelfDump.callChain, "\(names)")
        #expect(thread.frames.first?.trust == .context)
        #expect(thread.frames.dropFirst().prefix(2).allSatisfy { $0.trust == .scan }, "\(thread.frames)")
    }
}
