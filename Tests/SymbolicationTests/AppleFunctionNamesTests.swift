import FaultlineCore
import Symbolication
import Testing

/// Names as Apple binaries and reports carry them: symbol-table names lose Mach-O's one leading underscore before
/// they reach the demangler, Embedded Swift's `$e` names demangle like `$s` ones, and Objective-C methods stay as
/// written.
@Suite struct AppleFunctionNamesTests {
    @Test(arguments: [
        // (name as the module gives it, demangled, simplified)
        (
            "$s4shop8checkoutyBi64_AA5OrderV_ADtF", "shop.checkout(shop.Order, shop.Order) -> Builtin.Int64",
            "checkout(_:_:)"
        ),
        (
            "$e4shop8checkoutyBi64_AA5OrderV_ADtF", "shop.checkout(shop.Order, shop.Order) -> Builtin.Int64",
            "checkout(_:_:)"
        ),
        (
            "_ZN4shop8payments6chargeERKNS_6BasketIiEEi", "shop::payments::charge(shop::Basket<int> const&, int)",
            "shop::payments::charge"
        ),
        ("_T04shop5OrderV5totalSiyF", "shop.Order.total() -> Swift.Int", "Order.total()"),
        ("-[UIApplication sendEvent:]", "-[UIApplication sendEvent:]", "-[UIApplication sendEvent:]"),
        ("+[NSObject(Shop) load]", "+[NSObject(Shop) load]", "+[NSObject(Shop) load]"),
        (
            "__29-[ShopViewController viewDidLoad]_block_invoke", "__29-[ShopViewController viewDidLoad]_block_invoke",
            "__29-[ShopViewController viewDidLoad]_block_invoke"
        ),
        ("main", "main", "main"),
    ])
    func demangledAndSimplified(_ name: String, _ demangled: String, _ simplified: String) {
        #expect(Demangler.demangle(name) == demangled)
        #expect(FunctionNames.simplified(Demangler.demangle(name)) == simplified)
    }
}
