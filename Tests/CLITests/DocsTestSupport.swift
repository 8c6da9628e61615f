import Foundation

/// The repository this test file is in, found from the file's own path (`Tests/CLITests/` is two levels down).
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file of the repository as text.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Whether `path` (relative to the root) is a folder.
    static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    /// Whether `path` (relative to the root) exists, as a file or a folder.
    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path)
    }

    /// The folders directly in `path` (relative to the root; "" for the root), hidden ones left out, sorted.
    static func subfolders(of path: String) -> [String] {
        let folder = path.isEmpty ? root : root.appendingPathComponent(path)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && isFolder(path.isEmpty ? $0 : "\(path)/\($0)") }.sorted()
    }

    /// The files git tracks, as paths relative to the root; nil when git can't say (no git, not a checkout).
    static func trackedFiles() -> [String]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", root.path, "ls-files", "-z"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let files = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return files.isEmpty ? nil : files
    }
}

/// The few pieces of Markdown the documentation tests read.
enum Markdown {
    /// A fenced code block: its info string, its lines, and the line number (1-based) of its first line.
    struct Block {
        var info: String
        var lines: [String]
        var firstLine: Int
    }

    /// Every fenced block (three backticks) of `text`, in order.
    static func fencedBlocks(_ text: String) -> [Block] {
        var blocks: [Block] = []
        var open: Block?
        for (index, line) in lines(text).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed.hasPrefix("```") {
                    blocks.append(block)
                    open = nil
                } else {
                    block.lines.append(line)
                    open = block
                }
            } else if trimmed.hasPrefix("```") {
                open = Block(
                    info: String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces), lines: [],
                    firstLine: index + 2)
            }
        }
        return blocks
    }

    /// The lines of `text`.
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The lines of the section under the level-2 heading `heading` (`## Layout`), up to the next level-2 heading,
    /// with the line number (1-based) of the first one; nil when there is no such heading.
    static func section(_ text: String, heading: String) -> (lines: [String], firstLine: Int)? {
        let all = lines(text)
        guard let start = all.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == heading }) else {
            return nil
        }
        let end = all[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? all.endIndex
        return (Array(all[(start + 1)..<end]), start + 2)
    }

    /// The contents of the code spans (single backticks) of a line.
    static func codeSpans(_ line: String) -> [String] {
        let parts = line.split(separator: "`", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count - 1, by: 2).map { String(parts[$0]) }
    }

    /// `line` without its code spans.
    static func withoutCodeSpans(_ line: String) -> String {
        let parts = line.split(separator: "`", omittingEmptySubsequences: false)
        return stride(from: 0, to: parts.count, by: 2).map { String(parts[$0]) }.joined(separator: " ")
    }

    /// The cells of a table row (`| a | b |`), trimmed; nil when the line is not a table row.
    static func cells(_ line: String) -> [String]? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("|"), trimmed.hasSuffix("|"), trimmed.count > 1 else { return nil }
        return trimmed.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
