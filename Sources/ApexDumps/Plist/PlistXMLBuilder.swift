import CLibXML2
import Foundation

// The one-piece parse: libxml2's SAX2 callbacks and the builder that turns their events into a ``PlistNode``
// tree, with the checks and messages of a walk over the finished document.
extension PlistXMLParser {
    /// Parses `data` in one piece; also the size of libxml2's dictionary of names by the end.
    static func parseCounting(_ data: Data) throws(PlistParseError) -> (value: PlistNode, dictionaryBytes: Int) {
        try parseCounting([data])
    }

    /// Parses `parts`, read in turn as one document (libxml2 reads them a chunk at a time, at most `chunkLimit`
    /// bytes: see ``XMLChunkedInput``; from one buffer with `inChunks` false); also the size of libxml2's
    /// dictionary of names by the end.
    static func parseCounting(
        _ parts: [Data], inChunks: Bool = true, chunkLimit: Int = 16 * 1024
    ) throws(PlistParseError) -> (value: PlistNode, dictionaryBytes: Int) {
        // SafeXML's way (no network, entities or DTD; a bare DOCTYPE only; nothing printed), streaming.
        try SafeXML.stream(
            parts, documentTypes: .bareOnly, inChunks: inChunks, chunkLimit: chunkLimit, builder: { Builder() },
            content: content
        ) { state, wellFormed, builder throws(PlistParseError) in
            if let line = state.refusedLine { throw PlistParseError(.xmlDeclaresDTD, detail: "line \(line)") }
            // Where libxml2 stopped and why, in words (never the document's text).
            let failure = state.firstErrorCode == 0 ? nil : state.firstErrorLocation + state.firstErrorWords
            return (try builder.finish(wellFormed: wellFormed, failure: failure), state.dictionaryBytes)
        }
    }

    // MARK: Callbacks

    /// This parser's content callbacks, for SafeXML's one handler: no element, text or comment node is ever made.
    private static let content = SAXContent(
        startElement: { context, localName, prefix, uri, _, _, _, _, _ in
            guard let context, let localName, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.startElement(context, localName, prefix: prefix, uri: uri)
        },
        endElement: { context, _, _, _ in
            guard let context, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.endElement()
        },
        characters: { context, bytes, length in
            guard let context, let bytes, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.characters(context, UnsafeBufferPointer(start: bytes, count: Int(length)))
        },
        cdata: { context, bytes, length in
            guard let context, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.cdata(context, UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : Int(length)))
        },
        reference: { context, _ in
            guard let context, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.reference()
        },
        comment: { context, _ in
            guard let context, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.skipped(.comment, line: Int(xmlSAX2GetLineNumber(context)))
        },
        processingInstruction: { context, _, _ in
            guard let context, let builder = PlistXMLParser.builder(context) else { return }
            builder.pointee.skipped(.instruction, line: Int(xmlSAX2GetLineNumber(context)))
        })

    /// The builder behind a callback's user data (the parser context).
    private static func builder(_ context: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Builder>? {
        SafeXML.user(context)?.assumingMemoryBound(to: Builder.self)
    }

    // MARK: Building

    /// The parse state the callbacks share.
    fileprivate struct Builder {
        /// The open elements being read. Elements inside a skipped one have no frame.
        var frames: [Frame] = []
        /// How many of the open frames are `<array>` or `<dict>`.
        var containers = 0
        /// How many open elements are being skipped: the content of `<true/>` and `<false/>`, a second value of
        /// `<plist>`, and what is left of the value after its first error.
        var skipping = 0
        /// Whether the root element has started, and whether it is `<plist>`.
        var rootSeen = false
        var rootIsPlist = false
        /// The first problem among the `<plist>` root's children, and the first inside the value.
        var plistError: PlistParseError?
        var valueError: PlistParseError?
        /// The value, once read.
        var result: PlistNode?

        /// The text of the element holding text that is open (only one can be).
        var text: [UInt8] = []

        /// The run of text callbacks going on (one text node of a DOM): the line of its first part, and whether
        /// it holds anything but XML white space.
        var inRun = false
        var runLine = 0
        /// Whether the run's line is still to be taken from its next callback.
        var runLineOpen = false
        var runHasText = false

        /// The interned names of the tags, in `Tag` order, from the parser's dictionary.
        var names: [UnsafePointer<xmlChar>?] = []

        // MARK: Events

        mutating func startElement(
            _ context: UnsafeMutableRawPointer, _ localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?,
            uri: UnsafePointer<xmlChar>?
        ) {
            endRun()
            if skipping > 0 {
                skipping += 1
                return
            }
            let line = Int(xmlSAX2GetLineNumber(context))
            let (tag, name) = identify(context, localName, prefix: prefix, uri: uri)
            guard let parent = frames.indices.last else {
                guard !rootSeen else {
                    skipping += 1
                    return
                }
                rootSeen = true
                if tag == .plist {
                    rootIsPlist = true
                    frames.append(Frame(.plist, line: line))
                } else {
                    startValue(tag, name, line: line)
                }
                return
            }
            frames[parent].last = .element
            frames[parent].lastLine = line
            switch frames[parent].tag {
            case .plist:
                frames[parent].values += 1
                guard frames[parent].values == 1 else {
                    failPlist(line, "the <plist> element holds more than one value")
                    skipping += 1
                    return
                }
                startValue(tag, name, line: line)
            case .array:
                startValue(tag, name, line: line)
            case .dict:
                if frames[parent].pendingKey != nil {
                    guard tag != .key else { return failStart(line, "a <key> without a value") }
                    startValue(tag, name, line: line)
                } else {
                    guard tag == .key else { return failStart(line, "a value without a <key> in a <dict>") }
                    text.removeAll(keepingCapacity: true)
                    frames.append(Frame(.key, line: line))
                }
            default:
                failStart(line, nonText(frames[parent].tag))
            }
        }

        mutating func endElement() {
            endRun()
            if skipping > 0 {
                skipping -= 1
                return
            }
            guard let frame = frames.popLast() else { return }
            switch frame.tag {
            case .plist:
                if plistError == nil, frame.values == 0 {
                    plistError = structural(frame.line, "the <plist> element holds no value")
                }
                result = frame.value
            case .array:
                containers -= 1
                deliver(.array(Self.exactly(frame.elements)))
            case .dict:
                containers -= 1
                guard frame.pendingKey == nil else {
                    return fail(frame.line, "a <key> without a value at the end of a <dict>")
                }
                deliver(.dictionary(PlistDictionary(Self.exactly(frame.entries))))
            case .key:
                frames[frames.count - 1].pendingKey = String(decoding: text, as: UTF8.self)
            default:
                finishScalar(frame)
            }
        }

        /// `elements` in an array of their size: a frame's array keeps the room it grew (or reserved) into, which
        /// a 100,000-item document would keep for every item.
        static func exactly<Element>(_ elements: [Element]) -> [Element] {
            guard elements.capacity > elements.count else { return elements }
            return [Element](unsafeUninitializedCapacity: elements.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: elements)
            }
        }

        mutating func characters(_ context: UnsafeMutableRawPointer, _ bytes: UnsafeBufferPointer<xmlChar>) {
            if !inRun || runLineOpen {
                // A run's line is libxml2's when it hands over its first text; a callback that ends at the end of
                // what was read so far is one that reading at once would have gone on from (XMLChunkedInput).
                let first = !inRun
                inRun = true
                runLine = Int(xmlSAX2GetLineNumber(context))
                runLineOpen = XMLChunkedInput.endsAtEndOfInput(context, bytes)
                if first { runHasText = false }
                if skipping == 0, let index = frames.indices.last {
                    frames[index].last = .text
                    frames[index].lastLine = runLine
                }
            }
            guard skipping == 0, let index = frames.indices.last else { return }
            if frames[index].tag.holdsText {
                text.append(contentsOf: bytes)
            } else if !runHasText {
                runHasText = bytes.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
            }
        }

        mutating func cdata(_ context: UnsafeMutableRawPointer, _ bytes: UnsafeBufferPointer<xmlChar>) {
            endRun()
            guard skipping == 0, let index = frames.indices.last else { return }
            if frames[index].tag.holdsText {
                text.append(contentsOf: bytes)
            } else {
                misplaced(at: frames[index].lineOfNextChild, in: frames[index].tag)
            }
            if index < frames.count {
                frames[index].last = .cdata
            }
        }

        mutating func reference() {
            endRun()
            guard skipping == 0, let index = frames.indices.last else { return }
            let line = frames[index].lineOfNextChild
            if frames[index].tag.holdsText {
                fail(line, nonText(frames[index].tag))
            } else {
                misplaced(at: line, in: frames[index].tag)
                if index < frames.count { frames[index].last = .reference }
            }
        }

        /// A comment or processing instruction: skipped, but remembered for the line of a later error.
        mutating func skipped(_ kind: Child, line: Int) {
            endRun()
            guard skipping == 0, let index = frames.indices.last else { return }
            frames[index].last = kind
            frames[index].lastLine = line
        }

        // MARK: Values

        /// Starts the value element `tag` (`name` as written) on `line`, inside the open frames.
        private mutating func startValue(_ tag: Tag, _ name: String?, line: Int) {
            switch tag {
            case .string, .data, .date, .integer, .real:
                text.removeAll(keepingCapacity: true)
                frames.append(Frame(tag, line: line))
            case .true, .false:
                // Whatever is inside is not read.
                deliver(.boolean(tag == .true))
                skipping += 1
            case .array, .dict:
                guard containers < PlistNode.maxNesting else {
                    return failStart(line, "containers nested deeper than \(PlistNode.maxNesting) levels")
                }
                containers += 1
                var frame = Frame(tag, line: line)
                // Room for a keychain item's attributes at once, instead of growing by doubling from one.
                if tag == .dict { frame.entries.reserveCapacity(16) }
                frames.append(frame)
            case .key:
                failStart(line, "a <key> outside a <dict>")
            case .plist, .other:
                failStart(line, "an element that is not a plist value: <\(PlistXMLParser.printable(name ?? tag.name))>")
            }
        }

        /// Ends an element holding a scalar's text.
        private mutating func finishScalar(_ frame: Frame) {
            switch frame.tag {
            case .string:
                deliver(.string(String(decoding: text, as: UTF8.self)))
            case .data:
                switch PlistXMLParser.base64(text) {
                case .success(let data): deliver(.data(data))
                case .failure(let damage): deliver(.damagedData(damage.reason))
                }
            case .date:
                guard let date = IOSAttributes.date(iso8601: String(PlistXMLParser.trimmed(text))) else {
                    return fail(frame.line, "a <date> that is not an ISO 8601 date")
                }
                deliver(.date(date))
            case .integer:
                guard let number = PlistXMLParser.integer(PlistXMLParser.trimmed(text)) else {
                    return fail(frame.line, "an <integer> that is not a 64-bit integer")
                }
                deliver(number)
            default:
                guard let number = Double(PlistXMLParser.trimmed(text)) else {
                    return fail(frame.line, "a <real> that is not a number")
                }
                deliver(.real(number))
            }
        }

        /// Hands a finished value to the open frame, or makes it the result of a bare root.
        private mutating func deliver(_ value: PlistNode) {
            guard let index = frames.indices.last else {
                result = value
                return
            }
            switch frames[index].tag {
            case .array:
                frames[index].elements.append(value)
            case .dict:
                let key = frames[index].pendingKey ?? ""
                frames[index].pendingKey = nil
                frames[index].entries.append((.string(key), value))
            default:
                frames[index].value = value
            }
        }

        // MARK: Errors

        /// The text of a run that has ended is checked where only elements may be.
        private mutating func endRun() {
            guard inRun else { return }
            inRun = false
            guard runHasText, skipping == 0, let index = frames.indices.last, !frames[index].tag.holdsText else {
                return
            }
            misplaced(at: runLine, in: frames[index].tag)
        }

        /// Text, CDATA or a reference where only elements may be.
        private mutating func misplaced(at line: Int, in tag: Tag) {
            let detail = "text or a reference inside <\(tag.name)>"
            if tag == .plist {
                failPlist(line, detail)
            } else {
                fail(line, detail)
            }
        }

        private func nonText(_ tag: Tag) -> String {
            "<\(tag.name)> holds an element or a reference, not only text"
        }

        /// A problem among the `<plist>` root's children: the first one is the error, whatever is in the value.
        private mutating func failPlist(_ line: Int, _ detail: String) {
            if plistError == nil { plistError = structural(line, detail) }
        }

        /// A problem inside the value: the first one is kept, and the rest of the value is skipped.
        private mutating func fail(_ line: Int, _ detail: String) {
            if valueError == nil { valueError = structural(line, detail) }
            let open = frames.count - (rootIsPlist ? 1 : 0)
            frames.removeLast(open)
            skipping += open
            containers = 0
        }

        /// A problem with an element that has just started, which is skipped with the rest.
        private mutating func failStart(_ line: Int, _ detail: String) {
            fail(line, detail)
            skipping += 1
        }

        private func structural(_ line: Int, _ detail: String) -> PlistParseError {
            PlistParseError(.xmlMalformed, detail: "line \(line): \(detail)")
        }

        /// The value, or the error a walk over the finished document would have found first; a document that is
        /// not well-formed has `failure`, libxml2's first error, as the error's detail.
        func finish(wellFormed: Bool, failure: String? = nil) throws(PlistParseError) -> PlistNode {
            guard wellFormed else { throw PlistParseError(.xmlMalformed, detail: failure) }
            guard rootSeen else { throw PlistParseError(.xmlMalformed) }
            if let plistError { throw plistError }
            if let valueError { throw valueError }
            guard let result else { throw PlistParseError(.xmlMalformed) }
            return result
        }

        // MARK: Names

        /// The tag of an element, and its name as a walk over the document would print it when it is no tag.
        private mutating func identify(
            _ context: UnsafeMutableRawPointer, _ localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?,
            uri: UnsafePointer<xmlChar>?
        ) -> (Tag, String?) {
            // A prefix without a namespace: libxml2's tree names the element by its qualified name.
            if let prefix, uri == nil {
                return (.other, PlistXMLParser.string(prefix) + ":" + PlistXMLParser.string(localName))
            }
            if names.isEmpty {
                let dictionary = context.assumingMemoryBound(to: xmlParserCtxt.self).pointee.dict
                names = Tag.allCases.map { tag in
                    tag == .other
                        ? nil
                        : tag.name.withCString {
                            xmlDictLookup(dictionary, UnsafeRawPointer($0).assumingMemoryBound(to: xmlChar.self), -1)
                        }
                }
            }
            // libxml2 interns element names in the same dictionary, so a known name is found by its address.
            for index in 0..<names.count where names[index] == localName {
                return (Tag(rawValue: index) ?? .other, nil)
            }
            let name = PlistXMLParser.string(localName)
            return (Tag.allCases.first { $0 != .other && $0.name == name } ?? .other, name)
        }
    }

    // MARK: Small helpers

    /// The UTF-8 text `bytes` without XML white space (space, tab, CR, LF) at either end.
    private static func trimmed(_ bytes: [UInt8]) -> Substring {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = bytes.lastIndex(where: { !isSpace($0) })
        else {
            return ""
        }
        return Substring(String(decoding: bytes[start...end], as: UTF8.self))
    }

    /// An element name for a message: at most 40 characters.
    fileprivate static func printable(_ name: String) -> String {
        name.count > 40 ? String(name.prefix(40)) + "…" : name
    }

    fileprivate static func string(_ name: UnsafePointer<xmlChar>) -> String {
        String(decoding: UnsafeBufferPointer(start: name, count: strlen(name)), as: UTF8.self)
    }
}
