// swift-tools-version:6.1
import PackageDescription

// A template for an app's own server: Parsley with Swift cloud code. Copy this folder, point the dependency at
// Parsley's repository (or keep the path), write your functions and triggers in Sources/AppCloud, and run
// `swift run app-server` (the same flags and environment as `parsley serve`).
let package = Package(
    name: "cloud-swift",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "parsley", path: "../..")],
    targets: [
        .target(name: "AppCloud", dependencies: [.product(name: "ParsleyServer", package: "parsley")]),
        .executableTarget(name: "app-server", dependencies: ["AppCloud"]),
    ]
)
