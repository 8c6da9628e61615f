/// The store's schema and its forward migrations.
///
/// `PRAGMA user_version` holds the schema version; `meta.format` marks the file as a store. Opening a store of
/// an older version runs each migration after it in one transaction; a newer version is refused.
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
        """
    ]

    static var currentVersion: Int { migrations.count }

    /// The item columns in the order ``SQLiteKeychainDatabase`` reads them.
    static let attributeColumns =
        "class, svce, acct, agrp, sync, srvr, sdmn, ptcl, atyp, port, path, crtr, labl, gena, pdmn, accc, cdat, mdat"

    /// The primary key, as a WHERE clause with 11 parameters in ``ItemAttributes/PrimaryKey`` order.
    static let primaryKeyClause =
        "class = ? AND svce = ? AND acct = ? AND agrp = ? AND sync = ? AND srvr = ? AND sdmn = ? AND ptcl = ? AND atyp = ? AND port = ? AND path = ?"
}
