// swift-tools-version:6.0
import PackageDescription

// An SDK adopting EntitlementCache from the outside: its two public products only, from the
// repository two folders up. `name:` because SwiftPM names a path dependency after its folder
// (`main` in one checkout, anything in another), which `package:` below would have to spell.
let package = Package(
  name: "MiniSDK",
  // EntitlementCache's own floor: an SDK can support every system the library does.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  products: [
    .library(name: "MiniSDK", targets: ["MiniSDK"])
  ],
  dependencies: [
    .package(name: "EntitlementCache", path: "../..")
  ],
  targets: [
    .target(
      name: "MiniSDK",
      dependencies: [.product(name: "EntitlementCache", package: "EntitlementCache")]
    ),
    .testTarget(
      name: "MiniSDKTests",
      dependencies: [
        "MiniSDK",
        .product(name: "EntitlementCache", package: "EntitlementCache"),
        .product(name: "EntitlementCacheTesting", package: "EntitlementCache"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
