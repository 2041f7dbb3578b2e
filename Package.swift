// swift-tools-version: 6.1
import PackageDescription

/// Links the Swift runtime and Foundation statically: `-static-stdlib`, and the static libraries
/// they use, in one group (the linker then finds each symbol whatever their order).
let staticSwiftRuntime =
    ["-static-stdlib", "-Xlinker", "--start-group"]
    + [
        "Foundation", "FoundationEssentials", "FoundationInternationalization", "_FoundationICU", "_FoundationCShims",
        "_FoundationCollections", "CoreFoundation", "swiftSynchronization", "swiftDispatch", "dispatch",
        "BlocksRuntime",
        "swift_Concurrency", "swift_StringProcessing", "swift_RegexParser", "swiftGlibc", "swift_Builtin_float",
    ].flatMap { ["-Xlinker", "-l\($0)"] } + ["-Xlinker", "--end-group"]

let package = Package(
    name: "magnets",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "MagnetsCore", targets: ["MagnetsCore"]),
        .library(name: "MagnetsStore", targets: ["MagnetsStore"]),
        .executable(name: "magnets", targets: ["magnets"]),
        .executable(name: "magnets-bench", targets: ["magnets-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The server (`magnets serve`): HTTP, its logs, token hashes, clean stops on SIGINT/SIGTERM.
        // swift-configuration support is left out: the server reads its settings from the command line.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        // The live connection (`GET /boards/NAME/live`, `sync FILE URL`): the WebSocket server
        // and client.
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The client side of a remote sync (`magnets sync FILE URL`).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Already built for Hummingbird; named because the server imports them itself.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // Boards in PostgreSQL (`magnets serve --postgres URL`): several servers on one database.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // The rules: no dependencies at all, so an app can embed the very rules the CLI uses.
        .target(name: "MagnetsCore"),

        // The board file: schema, op log, derived state, sync, bundles.
        .target(
            name: "MagnetsStore",
            dependencies: [
                "MagnetsCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The C API, for the op rows read and written by the hundred thousand (`FastStatement`).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            plugins: ["EmbedMigrations"]
        ),

        // A board on a server, reached over HTTP: the other side of a file's sync (SPEC §7).
        .target(
            name: "MagnetsRemote",
            dependencies: [
                "MagnetsStore", "MagnetsLive", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),

        // The live connection's WebSocket as an exchange channel, for both ends (PROTOCOL.md).
        .target(
            name: "MagnetsLive",
            dependencies: [
                "MagnetsStore", .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),

        // Pictures of a board: the terminal picture, SVG and the timelapse page.
        .target(name: "MagnetsRender", dependencies: ["MagnetsCore"]),

        // What a server serves, whatever holds its boards: the `BoardStore` and `BoardAdmin` seams,
        // each board's readers (`EventHub`, `Outbox`), hands, and tokens. No HTTP.
        .target(
            name: "MagnetsHosting",
            dependencies: [
                "MagnetsStore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Boards, ops and tokens in PostgreSQL, each process keeping a board file as a cache (SPEC §7):
        // a `BoardStore` and a `BoardAdmin`.
        .target(
            name: "MagnetsPostgres",
            dependencies: [
                "MagnetsStore", "MagnetsHosting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // A shared checkpoint's digest (SHA-256).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            plugins: ["EmbedMigrations"]
        ),

        // The server of SPEC §7: board files in a folder, tokens, the HTTP API.
        .target(
            name: "MagnetsServer",
            dependencies: [
                "MagnetsStore", "MagnetsHosting", "MagnetsLive",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                // Live connections' messages written as frames built once for every reader.
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The page's look (SPEC §8) is the SVG picture's: its palette.
                "MagnetsRender",
            ],
            // Page/* (HTML, CSS, the JS module) embedded at build time.
            plugins: ["EmbedPage"]
        ),

        // The command line: parses, calls the store, prints.
        .executableTarget(
            name: "magnets",
            dependencies: [
                "MagnetsStore", "MagnetsRender", "MagnetsRemote", "MagnetsHosting", "MagnetsServer",
                "MagnetsPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Release builds on Linux carry the Swift runtime and Foundation inside the binary
            // (what `swift build --static-swift-stdlib` does, here for every release build): no
            // dynamic linking at each start, direct calls into the runtime. They are linked by the
            // toolchain's lld rather than gold, whose binary starts faster. README, "Benchmarks";
            // PERFORMANCE.md, "Start-up".
            linkerSettings: [
                .unsafeFlags(["-use-ld=lld"] + staticSwiftRuntime, .when(platforms: [.linux], configuration: .release))
            ]
        ),

        // Benchmarks that print their figures (release mode).
        .executableTarget(
            name: "magnets-bench",
            dependencies: [
                "MagnetsCore", "MagnetsStore", .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),

        // Seeded schedules of replicas editing one board in files and syncing it through the
        // store's own code, checked for convergence and incremental == full replay: run a few
        // hundred by the store's tests, thousands by `magnets-fuzz converge`.
        .target(name: "MagnetsSchedules", dependencies: ["MagnetsStore"]),

        // A seeded mutation fuzzer for bundles and board files (see RELIABILITY.md).
        .executableTarget(
            name: "magnets-fuzz",
            dependencies: ["MagnetsStore", "MagnetsSchedules", .product(name: "GRDB", package: "GRDB.swift")]
        ),

        // Turns Migrations/*.sql into Swift at build time, so the binary carries its schema.
        .executableTarget(name: "embed-migrations"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"]),
        // Turns Page/* into Swift at build time, so `magnets serve` carries the board page.
        .plugin(name: "EmbedPage", capability: .buildTool(), dependencies: ["embed-migrations"]),

        // What more than one test target uses: a private PostgreSQL cluster, a free port, an
        // executor on threads of their own.
        .target(name: "MagnetsTestSupport", path: "Tests/MagnetsTestSupport"),
        .testTarget(name: "MagnetsCoreTests", dependencies: ["MagnetsCore"]),
        // Crashers/ holds files the fuzzer found; the tests read them from the source tree.
        .testTarget(
            name: "MagnetsStoreTests",
            dependencies: ["MagnetsStore", "MagnetsSchedules", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Crashers"]),
        .testTarget(name: "MagnetsRenderTests", dependencies: ["MagnetsRender"]),
        // The server's routes and a client's sync with it, in-process (HummingbirdTesting) against
        // a folder of board files; what needs a process stays in MagnetsCLITests.
        .testTarget(
            name: "MagnetsServerTests",
            dependencies: [
                "MagnetsServer", "MagnetsHosting", "MagnetsStore", "MagnetsRemote", "MagnetsTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The PostgreSQL board store at its layer, in-process, against a private cluster the tests
        // start on loopback (Debian's binaries, `Scripts/pg-cluster`).
        .testTarget(
            name: "MagnetsPostgresTests",
            dependencies: ["MagnetsPostgres", "MagnetsHosting", "MagnetsStore", "MagnetsCore", "MagnetsTestSupport"]),
        // End-to-end tests run the built `magnets` binary, so they depend on it.
        // Fixtures/ holds board files of older formats; the Python scripts speak the live
        // connection's protocol by hand (a client and a proxy that cuts connections).
        .testTarget(
            name: "MagnetsCLITests",
            dependencies: [
                "MagnetsStore", "magnets", "MagnetsTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: [
                "Fixtures", "live_client.py", "cut_proxy.py", "hostile_server.py", "compact_bundle.py", "ws_frames.py",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
