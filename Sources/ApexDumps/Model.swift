// The dump model (Dump, KeychainRecord, PreferenceEntry, DumpError, the limits, ByteReader, Hex) is ApexDumpModel's:
// the importers and the migration need it without the readers' C libraries. It is re-exported, so that
// `import ApexDumps` gives the readers and the values they make, as it always has.

@_exported import ApexDumpModel
