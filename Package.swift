// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // `import X` is internal: a module's public API names what it exposes with `public import`.
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "parsley",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "parsley", targets: ["parsley"]),
        // The server as a library: an app's own package depends on it to run Swift cloud code
        // (`Parsley.main(cloud:)`; see examples/cloud-swift).
        .library(name: "ParsleyServer", targets: ["ParsleyServer"]),
        // The library's name before 0.9 (it held the server, not cloud code): `import ParsleyCloud` still builds.
        .library(name: "ParsleyCloud", targets: ["ParsleyCloud"]),
        .executable(name: "parsley-bench", targets: ["ParsleyBenchmarks"]),
        // Push providers (APNs over HTTP/2, FCM HTTP v1) behind one protocol.
        .library(name: "ParsleyPush", targets: ["ParsleyPush"]),
        // The pure core on its own, for the fuzz package in Fuzz/ (which builds nothing else).
        .library(name: "ParsleyCore", targets: ["ParsleyCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // JWKS parsing and RS256/ES256 verification of identity tokens (Sign in with Apple, Google, OpenID Connect).
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // Parse Server's GraphQL API (Sources/ParsleyGraphQL): parsing, validation and execution of GraphQL documents.
        .package(url: "https://github.com/GraphQLSwift/GraphQL", from: "4.3.0"),
        // OrderedDictionary: the GraphQL library's field and value maps; Deque: a WebSocket's waiting messages.
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        // HTTP/1 to HTTP types on the API port's own connection setup (LiveQuery sockets without a task each).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
    ],
    targets: [
        // Pure Parse model: values, JSON, schema types, query AST, write operations, errors. No I/O.
        .target(name: "ParsleyCore", swiftSettings: swiftSettings),
        // Storage protocol and the dialect-neutral SQL compiler.
        .target(name: "ParsleyStorage", dependencies: ["ParsleyCore"], swiftSettings: swiftSettings),
        // Parse semantics over a store: schema evolution, object writes, queries, includes. No clients of the outside
        // world: those are adapters (ParsleyAdapters) behind protocols declared here. NIOPosix is for the thread pool
        // that bcrypt runs on.
        .target(
            name: "ParsleyDomain",
            dependencies: [
                "ParsleyCore", "ParsleyStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                // AES-CTR for streaming the GCM of encrypted files (Files/FileCipher.swift).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The domain's adapters to the outside world: SMTP (Email/), the webhook HTTP client (Webhooks/), identity
        // providers for `authData` (Identity/), files in a folder (Files/); `Adapters.standard` bundles them.
        .target(
            name: "ParsleyAdapters",
            dependencies: [
                "ParsleyCore", "ParsleyDomain",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                // HMAC for Facebook's appsecret_proof and SigV4 signing of S3 requests (Files/S3Signer.swift).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // A local OpenID Connect identity provider for the tests: a JWKS endpoint on 127.0.0.1 (with Cache-Control,
        // counting its fetches) and RS256 identity tokens minted with its own keys, good ones and forged ones; and a
        // local Facebook Graph API and OAuth 2.0 token introspection endpoint for access tokens.
        .target(
            name: "ParsleyIdentityFakes",
            dependencies: [
                "ParsleyCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Push adapters behind the domain's `PushProvider`: APNs (HTTP/2, ES256 token auth) and FCM HTTP v1 (OAuth2
        // with an RS256 service-account JWT).
        .target(
            name: "ParsleyPush",
            dependencies: [
                "ParsleyCore", "ParsleyDomain",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Local servers that speak APNs (HTTP/2 over TLS, checking the provider JWT) and FCM HTTP v1 (with its OAuth2
        // token endpoint), for the tests and the push benchmark.
        .target(
            name: "ParsleyPushFakes",
            dependencies: [
                "ParsleyCore",
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The C API of the SQLite engine that sqlite-nio vendors (declarations only; the code is sqlite-nio's).
        .target(name: "CParsleySQLite"),
        // The embedded SQLite backend.
        .target(
            name: "ParsleySQLite",
            dependencies: [
                "ParsleyCore", "ParsleyStorage", "CParsleySQLite",
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The PostgreSQL backend (production; several server processes on one database).
        .target(
            name: "ParsleyPostgres",
            dependencies: [
                "ParsleyCore", "ParsleyStorage",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Parse Server's generated GraphQL API: a schema built from the app's classes, whose resolvers call the same
        // Domain services as the REST routes (no HTTP here; ParsleyHTTP mounts it at `graphQLPath`).
        .target(
            name: "ParsleyGraphQL",
            dependencies: [
                "ParsleyCore", "ParsleyDomain",
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Parse REST API over Hummingbird. Routers call the Domain services; no SQL and no store up here.
        .target(
            name: "ParsleyHTTP",
            dependencies: [
                "ParsleyCore", "ParsleyDomain", "ParsleyGraphQL",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The shared event loops' scheduling policy (EventLoopPolicy).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The embedded dashboard's pages, compiled into the binary (no files to ship beside it).
            resources: [
                "index.html", "style.css", "dom.js", "api.js", "values.js", "app.js", "browser.js", "schema.js", "config.js", "console.js",
                "people.js", "cloud.js", "push.js", "logs.js", "graphql.js", "health.js", "charts.js", "transfer.js",
            ]
            .map { .embedInCode("Dashboard/Assets/\($0)") },
            swiftSettings: swiftSettings
        ),
        // The command line (serve, schema, export, import, backup) and configuration, as a library.
        .target(
            name: "ParsleyServer",
            dependencies: [
                "ParsleyCore", "ParsleyStorage", "ParsleySQLite", "ParsleyPostgres", "ParsleyDomain", "ParsleyAdapters", "ParsleyHTTP",
                "ParsleyPush",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The cloud code of examples/cloud-swift (Glimp's notifications, Social Fitness's deadline alert), built here
        // too so the app-flow tests run it through the real server.
        // Compatibility: re-exports ParsleyServer under the old name.
        .target(name: "ParsleyCloud", dependencies: ["ParsleyServer"], swiftSettings: swiftSettings),
        .target(
            name: "ExampleAppCloud", dependencies: ["ParsleyServer"], path: "examples/cloud-swift/Sources/AppCloud", swiftSettings: swiftSettings),
        // `parsley`: the server without Swift cloud code.
        .executableTarget(name: "parsley", dependencies: ["ParsleyServer"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "ParsleyBenchmarks",
            dependencies: [
                "ParsleyCore", "ParsleyStorage", "ParsleySQLite", "ParsleyPostgres", "ParsleyDomain", "ParsleyAdapters", "ParsleyHTTP", "ParsleyPush",
                "ParsleyPushFakes", "ParsleyIdentityFakes",
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/ParsleyBenchmarks",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ParsleyCoreTests", dependencies: ["ParsleyCore"], swiftSettings: swiftSettings),
        // The SQL the storage layer builds, per dialect, and how the SQLite backend reports its errors.
        .testTarget(
            name: "ParsleyStorageTests",
            dependencies: [
                "ParsleyCore", "ParsleyStorage", "ParsleySQLite", "ParsleyPostgres",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ParsleyAPITests",
            dependencies: [
                "parsley", "ParsleyServer", "ParsleyCloud", "ExampleAppCloud",
                "ParsleyCore", "ParsleyStorage", "ParsleySQLite", "ParsleyPostgres", "ParsleyDomain", "ParsleyAdapters", "ParsleyHTTP",
                "ParsleyGraphQL",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Push: the providers, and the fake APNs (HTTP/2 over TLS) and FCM servers they are tested against.
                "ParsleyPush", "ParsleyPushFakes",
                // Sign in with Apple, Google, Facebook, OpenID Connect and OAuth 2.0 against local identity providers.
                "ParsleyIdentityFakes",
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // LiveQuery: a real WebSocket client.
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
