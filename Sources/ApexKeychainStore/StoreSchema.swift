/// The store's schema and its forward migrations.
///
/// `PRAGMA user_version` holds the schema version; `meta.format` marks the file as a store. Opening a store of
/// an older version runs each migration after it in one transaction; a newer version is refused. A store that
/// is opened read-only is not migrated: it is read as its version stands (see ``sealColumn(version:)``).
enum StoreSchema {
    static let format = "apex-keychain-store"

    /// Migration `i` takes a store from version `i` to version `i + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE items(
          id INTEGER PRIMARY KEY,
          class TEXT NOT NULL CHECK (class IN ('genp', 'inet')),
          svce TEXT NOT NULL, acct TEXT NOT NULL, agrp TEXT NOT NULL, sync INTEGER NOT NULL,
          srvr TEXT NOT NULL DEFAULT '', sdmn TEXT NOT NULL DEFAULT '', ptcl TEXT NOT NULL DEFAULT '',
          atyp TEXT NOT NULL DEFAULT '', port INTEGER NOT NULL DEFAULT 0, path TEXT NOT NULL DEFAULT '',
          crtr INTEGER, labl TEXT, gena BLOB, pdmn TEXT NOT NULL, accc INTEGER NOT NULL,
          cdat REAL NOT NULL, mdat REAL NOT NULL, data BLOB NOT NULL,
          UNIQUE (class, svce, acct, agrp, sync, srvr, sdmn, ptcl, atyp, port, path));
        """,
        // Version 2: which associated data each row's value is sealed with (``SealBinding``). The rows of
        // version 1 keep binding 1 until their next write.
        """
        ALTER TABLE items ADD COLUMN seal INTEGER NOT NULL DEFAULT 1;
        """,
    ]

    static var currentVersion: Int { migrations.count }

    /// The item columns in the order ``SQLiteKeychainDatabase`` reads them (``ItemColumn``, up to `data`).
    static let attributeColumns = ItemColumn.allCases.prefix { $0 != .data }.map(\.name).joined(separator: ", ")

    /// The primary key, as a WHERE clause with 11 parameters in ``ItemAttributes/PrimaryKey`` order.
    static let primaryKeyClause =
        "class = ? AND svce = ? AND acct = ? AND agrp = ? AND sync = ? AND srvr = ? AND sdmn = ? AND ptcl = ? AND atyp = ? AND port = ? AND path = ?"

    /// What a SELECT reads for a row's ``SealBinding`` in a store of `version`: the `seal` column, or binding 1
    /// in a version 1 store (read-only, so not migrated).
    static func sealColumn(version: Int) -> String {
        version >= 2 ? "seal" : String(SealBinding.identity.rawValue)
    }
}

/// Which associated data a row's value is sealed with.
///
/// Each binding starts its associated data with its own tag, so a value sealed with one never opens under
/// another: a row whose `seal` column was edited to an older binding does not open.
enum SealBinding: Int64 {
    /// Version 1: the item's identity (class and primary key) and protection (accessible class, access
    /// control, creator).
    case identity = 1
    /// Version 2, every write since: also the label, the generic attribute and both dates, so that none of
    /// them can be edited in the file without the value failing to open.
    case wholeRow = 2
}

/// The columns of a row of `items` as the store writes and reads them, in order: a column's offset in a SELECT
/// of ``StoreSchema/attributeColumns`` (then `data`, `seal`), and its parameter in an INSERT of
/// ``SQLiteKeychainDatabase/rowColumns``. The first eleven are the primary key, in ``ItemAttributes/PrimaryKey``
/// order.
enum ItemColumn: Int32, CaseIterable {
    case itemClass, service, account, accessGroup, synchronizable, server, securityDomain, protocolCode
    case authenticationType, port, path, creator, label, generic, protectionDomain, accessControl, created
    case modified, data, seal

    /// The column's name in the schema.
    var name: String {
        switch self {
        case .itemClass: "class"
        case .service: "svce"
        case .account: "acct"
        case .accessGroup: "agrp"
        case .synchronizable: "sync"
        case .server: "srvr"
        case .securityDomain: "sdmn"
        case .protocolCode: "ptcl"
        case .authenticationType: "atyp"
        case .port: "port"
        case .path: "path"
        case .creator: "crtr"
        case .label: "labl"
        case .generic: "gena"
        case .protectionDomain: "pdmn"
        case .accessControl: "accc"
        case .created: "cdat"
        case .modified: "mdat"
        case .data: "data"
        case .seal: "seal"
        }
    }

    /// Whether the column is one of the primary key's eleven.
    var isKey: Bool { rawValue <= ItemColumn.path.rawValue }

    /// The column's offset in a row read from `base` (the offset of its first column).
    func offset(from base: Int32) -> Int32 { base + rawValue }

    /// The column's parameter number in an INSERT or UPDATE of every column (parameters count from 1).
    var parameter: Int32 { rawValue + 1 }

    /// The parameter after every column's (an UPDATE's `WHERE rowid = ?`).
    static let nextParameter = Int32(allCases.count) + 1
}
