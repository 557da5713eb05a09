// swift-tools-version:6.0
// A client of the PreviewLoop library with its own `Size`, `Source` and `Shape`: it compiles only when
// the module's types can be named `PreviewLoop.Size` etc. (no type in the library is named like the
// module). `make test` type-checks it (Scripts/check-client.sh), with the README's library example and
// LibraryExample, the whole program Docs/library.md shows; `make client` builds both targets.
import PackageDescription

let package = Package(
    name: "Client",
    dependencies: [.package(name: "PreviewLoop", path: "../..")],
    targets: [
        .executableTarget(
            name: "Client",
            dependencies: [.product(name: "PreviewLoop", package: "PreviewLoop")]
        ),
        .executableTarget(
            name: "LibraryExample",
            dependencies: [.product(name: "PreviewLoop", package: "PreviewLoop")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
