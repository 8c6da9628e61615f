import Foundation

// What the builder of the one-piece parse (PlistXMLBuilder.swift) keeps for each open element: the tags it knows,
// the children a walk over the document would see, and the frame of an element being read.
extension PlistXMLParser {
    /// An element name the parser knows.
    enum Tag: Int, CaseIterable {
        case plist, array, dict, key, string, data, date, integer, real, `true`, `false`, other

        /// The element name (`other` has none).
        var name: String {
            switch self {
            case .plist: "plist"
            case .array: "array"
            case .dict: "dict"
            case .key: "key"
            case .string: "string"
            case .data: "data"
            case .date: "date"
            case .integer: "integer"
            case .real: "real"
            case .true: "true"
            case .false: "false"
            case .other: ""
            }
        }
    }

    /// A child node as a walk over the document would have seen it, for the line an error names.
    enum Child {
        case none, element, text, comment, instruction, cdata, reference
    }

    /// An open element that is being read: the `<plist>` root, a container, or an element holding text.
    struct Frame {
        var tag: Tag
        /// The line of its start tag.
        var line: Int
        /// Its last child so far, and that child's line.
        var last: Child = .none
        var lastLine = 0
        /// An `<array>`'s values.
        var elements: [PlistNode] = []
        /// A `<dict>`'s entries, and its key waiting for a value.
        var entries: [(key: PlistNode, value: PlistNode)] = []
        var pendingKey: String?
        /// A `<plist>`'s element children so far, and its value.
        var values = 0
        var value: PlistNode?

        init(_ tag: Tag, line: Int) {
            self.tag = tag
            self.line = line
        }

        /// The line a walk over the document gives a CDATA section or reference child now: that of the child before
        /// it when that is an element, text, comment or processing instruction, else that of this element.
        var lineOfNextChild: Int {
            switch last {
            case .element, .text, .comment, .instruction: lastLine
            case .none, .cdata, .reference: line
            }
        }
    }
}

extension PlistXMLParser.Tag {
    /// Whether the element holds text (a scalar or a key) rather than elements. Asked of a frame's stored tag, so
    /// that no frame is copied out of the stack to answer it.
    var holdsText: Bool { self != .plist && self != .array && self != .dict }
}
