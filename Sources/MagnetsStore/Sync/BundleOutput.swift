import Foundation
import MagnetsCore

/// Where a bundle is written (`ops export`): standard output or a file that appears whole.
extension OpBundle {
    /// Where `ops export` writes a bundle.
    enum Destination {
        /// Standard output (`-`).
        case standardOutput
        /// A pipe, terminal or other device, written to directly (no temporary file can be
        /// renamed over it, and it must not be read: reading `/dev/stdout` of a pipe waits for ever).
        case device(String)
        /// A new file, or an earlier bundle (or an empty file) to replace atomically; through a
        /// symlink, its target.
        case file(String)

        /// Looks at `path` without reading from anything but a regular file.
        init(_ path: String) throws {
            if path == "-" {
                self = .standardOutput
                return
            }
            var info = stat()
            guard stat(path, &info) == 0 else {
                guard errno == ENOENT else {
                    throw StoreError.failed("cannot write \(path): \(String(cString: strerror(errno)))")
                }
                self = .file(path)
                return
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                throw StoreError.refused("\(path) is a folder; give a file name for the bundle")
            case S_IFREG:
                let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
                var head = [UInt8](repeating: 0, count: OpBundle.signature.count)
                let count = fd < 0 ? -1 : head.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
                if fd >= 0 { _ = Foundation.close(fd) }
                guard info.st_size == 0 || (count == head.count && head == OpBundle.signature) else {
                    throw StoreError.fileExists(path)
                }
                self = .file(URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
            default:
                self = .device(path)
            }
        }

        /// Opens it for writing: a file as a temporary one beside it, renamed into place by
        /// `Sink.finish`; anything else directly.
        func open() throws -> Sink {
            switch self {
            case .standardOutput:
                return Sink(fd: STDOUT_FILENO, name: "standard output")
            case .device(let path):
                let fd = Foundation.open(path, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else {
                    throw StoreError.failed("cannot write \(path): \(String(cString: strerror(errno)))")
                }
                return Sink(fd: fd, name: path, closes: true)
            case .file(let path):
                let url = URL(fileURLWithPath: path)
                let temporary = url.deletingLastPathComponent().appendingPathComponent(
                    ".\(url.lastPathComponent).\(getpid()).tmp"
                ).path
                let fd = Foundation.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
                guard fd >= 0 else {
                    let why = BoardFile.writeProblem(path, needsNewFiles: true) ?? String(cString: strerror(errno))
                    throw StoreError.failed("cannot write \(path): \(why)")
                }
                return Sink(fd: fd, name: path, closes: true, renaming: temporary)
            }
        }
    }

    /// A bundle being written: its bytes go out as they come, so it is never held whole. A file
    /// appears (under its name, whole) only at `finish`; `abandon` leaves nothing behind.
    final class Sink {
        let fd: Int32
        /// The destination, as errors name it.
        let name: String
        let closes: Bool
        /// The temporary file renamed to `name` at `finish`.
        let temporary: String?

        init(fd: Int32, name: String, closes: Bool = false, renaming temporary: String? = nil) {
            self.fd = fd
            self.name = name
            self.closes = closes
            self.temporary = temporary
        }

        func write(_ bytes: UnsafeBufferPointer<UInt8>) throws {
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    if errno == ENOSPC || (temporary != nil && BoardFile.isOutOfSpace(name)) {
                        throw StoreError.diskFull(name)
                    }
                    throw StoreError.failed("cannot write \(name): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }

        /// Ends the writing: a file is closed and renamed into place.
        func finish() throws {
            if closes, Foundation.close(fd) != 0, let temporary {
                let full = errno == ENOSPC
                let why = String(cString: strerror(errno))
                unlink(temporary)
                throw full ? StoreError.diskFull(name) : StoreError.failed("cannot write \(name): \(why)")
            }
            if let temporary, rename(temporary, name) != 0 {
                let why = String(cString: strerror(errno))
                unlink(temporary)
                throw StoreError.failed("cannot write \(name): \(why)")
            }
        }

        /// Ends the writing after a failure: a file's temporary one is removed.
        func abandon() {
            if closes { _ = Foundation.close(fd) }
            if let temporary { unlink(temporary) }
        }
    }
}
