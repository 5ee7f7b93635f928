// The server library was called ParsleyCloud before 0.9; it is ParsleyServer now (it holds the command line, the
// options and `Parsley.main`, not cloud code, which lives in ParsleyDomain/Cloud). An app that still writes
// `.product(name: "ParsleyCloud", package: "parsley")` and `import ParsleyCloud` keeps building through this module;
// move to `ParsleyServer` at your convenience (README, "Upgrading from ParsleyCloud").
@_exported import ParsleyServer
