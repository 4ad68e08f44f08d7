import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzOne(.markdownDestination, data, size) }

fuzzMain(.markdownDestination, testOneInput)
