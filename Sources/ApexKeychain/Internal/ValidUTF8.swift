extension String {
    /// The string whose UTF-8 is exactly `bytes`, or nil when they are not valid UTF-8; a byte-order mark and NUL
    /// bytes are kept, as they are. The standard library's `String(validating:as:)` does the same but needs iOS 18
    /// and macOS 15, beyond the package's floor (iOS 15.1): this decodes with `String(decoding:as:)`, which
    /// replaces each invalid sequence with U+FFFD, and keeps the result only if its UTF-8 is `bytes` unchanged (a
    /// repaired string is valid UTF-8, so it can't equal bytes that weren't). `package` access: the dump model and
    /// `ApexKeychainApple` use it too.
    package init?<Bytes: Collection>(validUTF8 bytes: Bytes) where Bytes.Element == UInt8 {
        let decoded = String(decoding: bytes, as: UTF8.self)
        guard decoded.utf8.elementsEqual(bytes) else { return nil }
        self = decoded
    }
}
