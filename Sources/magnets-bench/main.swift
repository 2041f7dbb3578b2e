import Foundation

// magnets-bench [core|store|sync|sync-quick|history|history-cost|server|server-pg|first-answer|page|words|bundle|all]: prints the figures the issues ask for, measured in one
// run on this machine. Build in release: `swift build -c release`, then run
// `.build/release/magnets-bench`.
let which = CommandLine.arguments.dropFirst().first ?? "all"
do {
    switch which {
    case "core": try CoreBenchmark.run()
    case "fold": CoreBenchmark.foldOnly()  // for profiling: generation, then folds only
    case "fold-undo": CoreBenchmark.foldOnly(undoShare: 0.1)  // the same with 10% undos
    case "store": try StoreBenchmark.run()
    case "sync": try SyncBenchmark.run()
    case "sync-against":
        // magnets-bench sync-against OTHER_MAGNETS [M…]: this build's sync against another's.
        guard let other = CommandLine.arguments.dropFirst(2).first else {
            throw BenchError("sync-against needs the other magnets binary")
        }
        let sizes = CommandLine.arguments.dropFirst(3).compactMap { Int($0) }
        try SyncAgainstBenchmark.run(other: other, sizes: sizes.isEmpty ? [50_000, 200_000] : sizes)
    case "history": try HistoryBenchmark.run()
    case "server": try ServerBenchmark.run()
    case "server-load": try ServerBenchmark.run(m: [])
    // magnets-bench server-sync [M…]: part (a) alone (2×50k and 2×200k unless sizes are given).
    case "server-sync":
        let sizes = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        try ServerBenchmark.run(m: sizes.isEmpty ? [50_000, 200_000] : sizes, clients: 0)
    case "server-history": try ServerBenchmark.runLongHistory()
    case "ceiling-server": try ServerBenchmark.ceilingServer()  // started by `server`
    // 32 clients: files, PostgreSQL with one process and with two (issue 22); needs PostgreSQL.
    case "server-pg": try PostgresBenchmark.run()
    case "first-answer":
        // magnets-bench first-answer [M …]: boards of M moves (default 10,000 and 100,000).
        let sizes = CommandLine.arguments.dropFirst(2).compactMap { Int($0) }
        try FirstAnswerBenchmark.run(sizes: sizes.isEmpty ? [10_000, 100_000] : sizes)
    // magnets-bench idle-boards [--postgres] [N]: a server's memory after N boards went idle (issue 36).
    case "idle-boards":
        let rest = CommandLine.arguments.dropFirst(2)
        try IdleBoardsBenchmark.run(
            boards: rest.compactMap { Int($0) }.first ?? 1000, postgres: rest.contains("--postgres"))
    case "history-cost":
        // magnets-bench history-cost [--no-postgres] [M …]: boards of M ops (default 10^4–10^6).
        let arguments = CommandLine.arguments.dropFirst(2)
        let sizes = arguments.compactMap { Int($0) }
        try HistoryCostBenchmark.run(
            sizes: sizes.isEmpty ? [10_000, 100_000, 1_000_000] : sizes, postgres: !arguments.contains("--no-postgres"))
    case "words": WordsBenchmark.run()
    case "bundle": try BundleBenchmark.run()
    // magnets-bench page [N]: the board page, release on one page → drawn on another (issue 21).
    case "page":
        try PageBenchmark.run(drags: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 200)
        try HandsBenchmark.run()
    // magnets-bench hands [SECONDS]: others' hands alone (issue 34).
    case "hands": try HandsBenchmark.run(seconds: Double(CommandLine.arguments.dropFirst(2).first ?? "") ?? 10)
    case "probe": try SyncProbe.run(Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 50_000)
    case "sync-quick": try SyncBenchmark.run(sizes: [5_000, 50_000], repetitions: 3)
    case "all":
        try CoreBenchmark.run()
        try StoreBenchmark.run()
        try SyncBenchmark.run()
        try HistoryBenchmark.run()
        WordsBenchmark.run()
    default:
        print(
            "usage: magnets-bench [core|fold|fold-undo|store|sync|sync-quick|sync-against OTHER [M…]|history|server|server-sync [M]|server-history|server-pg|first-answer [M…]|history-cost [--no-postgres] [M…]|idle-boards [--postgres] [N]|page [N]|hands [S]|words|probe [M]|bundle|all]"
        )
        exit(64)
    }
} catch {
    // (e.g. `probe` with MAGNETS_BENCH_KEEP naming a folder that holds its files already)
    FileHandle.standardError.write(Data("error: \(error.localizedDescription)\n".utf8))
    exit(1)
}
