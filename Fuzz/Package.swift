// swift-tools-version:6.1
// libFuzzer targets for ParsleyCore. Built on their own (only ParsleyCore, which has no dependencies), with
// `-sanitize=fuzzer,address`: see scripts/fuzz.sh.
import PackageDescription

let core: Target.Dependency = .product(name: "ParsleyCore", package: "parsley")

let package = Package(
    name: "parsley-fuzz",
    dependencies: [.package(name: "parsley", path: "..")],
    targets: [
        // Declares libFuzzer's LLVMFuzzerRunDriver.
        .systemLibrary(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer", core]),
        .executableTarget(name: "FuzzJSON", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "FuzzWhere", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "FuzzWrite", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "FuzzFileNames", dependencies: [core, "FuzzSupport"]),
    ]
)
