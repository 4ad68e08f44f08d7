#if IMGBAKE_FUZZING
import CLibFuzzer
#endif
import Foundation
import FuzzProperties

/// The `main` of every fuzz program. Built by `make fuzz` (`-sanitize=fuzzer`, `-DIMGBAKE_FUZZING`) it
/// hands control to libFuzzer with the program's `LLVMFuzzerTestOneInput`; SwiftPM renames an
/// executable's `main`, so libFuzzer's own `main` is not the one that runs. In a plain build it checks
/// the files named on the command line (a crash libFuzzer kept, a corpus) and exits 1 if one fails.
package func fuzzMain(_ target: FuzzTarget, _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
    #if IMGBAKE_FUZZING
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
    #else
    var failed = false
    for path in CommandLine.arguments.dropFirst() {
        guard let input = FileManager.default.contents(atPath: path) else {
            print("\(path): cannot read")
            failed = true
            continue
        }
        if let failure = target.check(Array(input)) {
            print("\(path): \(failure)")
            failed = true
        }
    }
    exit(failed ? 1 : 0)
    #endif
}

/// One libFuzzer input: a property that does not hold is a crash, so libFuzzer keeps the input.
package func fuzzOne(_ target: FuzzTarget, _ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = target.check(input) { fatalError("fuzz target \(target.rawValue): \(failure)") }
    return 0
}
