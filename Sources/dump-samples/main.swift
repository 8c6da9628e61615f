import Foundation
import SampleDumps

// dump-samples: writes the sample dumps of samples/ and the test fixtures, or large dumps for the benchmark.
// Every value in them is made up; the output is the same on every run.

let usage = """
    usage: dump-samples <output-dir>            write the samples tree into <output-dir>
           dump-samples --large N <output-dir>  write N-item plist and SQLite dumps into <output-dir>

    """

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data(message.utf8))
    exit(code)
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--help"] || arguments == ["-h"] {
    print(usage, terminator: "")
    exit(0)
}

let files: [SampleFile]
let folder: String
do {
    switch arguments.count {
    case 1 where !arguments[0].hasPrefix("-"):
        folder = arguments[0]
        files = try SampleTree.files()
    case 3 where arguments[0] == "--large":
        guard let count = Int(arguments[1]), count > 0, count <= 10_000_000 else {
            fail("dump-samples: --large needs a count from 1 to 10000000\n" + usage, code: 64)
        }
        folder = arguments[2]
        files = try LargeSamples.files(count)
    default:
        fail(usage, code: 64)
    }
    try SampleTree.write(files, to: folder)
} catch {
    fail("dump-samples: \(error)\n", code: 1)
}
for file in files {
    print(URL(fileURLWithPath: folder).appendingPathComponent(file.path).path)
}
