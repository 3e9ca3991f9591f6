// swift-tools-version:5.7
// The Deniable SDK for Swift (iOS, macOS, Linux) over the C API (deniable_c.h, libdeniable_c).
// UNTESTED where no Swift toolchain exists, as on the machines that build this repository: what
// is checked here is the module map (CTest swift_module_map compiles and links the header as
// module DeniableC with clang -fmodules). docs/sdk.md "Swift" says how to build it.
import PackageDescription

let package = Package(
  name: "Deniable",
  platforms: [.iOS(.v13), .macOS(.v11)],
  products: [.library(name: "Deniable", targets: ["Deniable"])],
  targets: [
    // The C API: headers and library from an installed SDK, found with pkg-config
    // (deniable-c.pc: PKG_CONFIG_PATH=/opt/deniable/lib/pkgconfig). On iOS, an XCFramework of
    // libdeniable_c built with the C++ SDK for each architecture takes its place.
    .systemLibrary(name: "DeniableC", path: "Sources/DeniableC", pkgConfig: "deniable-c"),
    .target(name: "Deniable", dependencies: ["DeniableC"], path: "Sources/Deniable"),
  ]
)
