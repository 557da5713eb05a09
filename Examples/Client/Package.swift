// swift-tools-version:6.0
// A client of the PreviewLoop library with its own `Size`, `Source` and `Shape`: it compiles only when
// the module's types can be named `PreviewLoop.Size` etc. (no type in the library is named like the
// module). `make test` builds it; it also runs the README's library example against a fixture.
import PackageDescription

let package = Package(
    name: "Client",
    dependencies: [.package(name: "PreviewLoop", path: "../..")],
    targets: [
        .executableTarget(
            name: "Client",
            dependencies: [.product(name: "PreviewLoop", package: "PreviewLoop")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
