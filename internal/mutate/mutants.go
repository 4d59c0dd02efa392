package mutate

// Checks shared by several mutants.
var (
	loggingTests = Check{Package: "./internal/logging", Tests: []string{
		"TestSecretFieldKeysAreMaskedWhateverTheValue", "TestPasswordsInsideOtherValuesAndMessagesAreMasked",
		"TestBridgeKeepsFieldsNamesAndLevels", "TestMaskStringMasksPasswordsAndKeepsTheRest",
	}}
	providerSetErrors = Check{Package: "./internal/provider", Tests: []string{"TestSetErrorsMaskAPasswordTheyEcho"}}
	secretsCLI        = Check{Package: "./internal/resources", Acc: true, Tests: []string{"TestAcc_secretsStayOutOfLogsAndPlans"}}
)

// Mutants are the behaviours users depend on, each broken once. A mutant's Search must occur exactly
// once in its File (TestMutantsMatchTheSource checks it in every `go test ./...`), and its Checks name
// the lowest-level tests that prove the behaviour, cheapest first; a check runs only when the ones
// before it did not kill the mutant.
var Mutants = []Mutant{
	// Placement and the ledger.
	{
		Name: "spread-inverted", Breaks: "spread places on the least used host",
		File:    "internal/static/placement.go",
		Search:  "\t\t\treturn c < 0\n",
		Replace: "\t\t\treturn c > 0\n",
		Checks:  []Check{{Package: "./internal/static", Tests: []string{"TestSpreadPlacesOnTheLeastUsedShareThenSpecOrder"}}},
	},
	{
		Name: "resize-ignored", Breaks: "slots resize a static runtime in place",
		File:    "internal/static/provisioner.go",
		Search:  "next.Slots = slots",
		Replace: "next.Slots = current.Slots",
		Checks:  []Check{{Package: "./internal/static", Tests: []string{"TestResizeInPlaceWhenTheHostHasRoomAndFailsClearlyOtherwise"}}},
	},
	{
		Name: "static-check-always-found", Breaks: "a runtime whose allocation is gone is planned for re-creation",
		File:    "internal/static/provisioner.go",
		Search:  "\tif errors.Is(err, database.ErrNotFound) {\n",
		Replace: "\tif errors.Is(err, database.ErrNotFound) {\n\t\talloc, err = &database.Allocation{ResourceID: r.ID, Host: p.spec.Runtimes[0].Host, Slots: 1}, nil\n\t}\n\tif false {\n",
		Checks:  []Check{{Package: "./internal/static", Tests: []string{"TestCheckResourceReportsGoneAndRemovedHostsWithoutWriting"}}},
	},
	{
		Name: "static-check-configured-slots", Breaks: "refresh reports the ledger's slots after an out-of-band change",
		File:    "internal/static/provisioner.go",
		Search:  "\targs := &provisioner.RuntimeArgs{Slots: alloc.Slots}\n",
		Replace: "\targs := &provisioner.RuntimeArgs{Slots: alloc.Slots}\n\tif asked, err := provisioner.NewRuntimeArgs(argsOf(opts)); err == nil {\n\t\talloc.Slots = asked.Slots\n\t}\n",
		Checks: []Check{
			{Package: "./internal/static", Tests: []string{"TestCheckResourceReportsTheLedgersSlotsNotTheConfigured"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_outOfBandLedgerChangeIsPlannedBack"}},
		},
	},
	{
		Name: "sqlite-snapshot-read-kept-after-a-change", Breaks: "a plan's lock-free SQLite read is thrown away when the ledger file changed during it",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\tif !unchangedSince(s.file, before) {\n",
		Replace: "\tif !unchangedSince(s.file, before) && false {\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteSnapshotReadDetectsWrites"}}},
	},
	{
		Name: "sqlite-snapshot-read-beside-link", Breaks: "a plan through a symbolic link to the SQLite ledger reads the committed allocations in the -wal beside its target",
		File:    "internal/database/sqlite.go",
		Search:  "if file, err = filepath.EvalSymlinks(path); err != nil {",
		Replace: "if file, err = path, error(nil); err != nil {",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteSnapshotReadThroughSymlink"}}},
	},
	{
		Name: "sqlite-locked-read-leaves-files", Breaks: "a plan as a user who cannot write the SQLite ledger file leaves no -wal/-shm files that block the owner's apply",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\t\tif refusal != refusedRollbackMode && s.wouldLeaveFiles() {\n",
		Replace: "\t\tif refusal != refusedRollbackMode && false {\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyFileLeavesNoFiles"}}},
	},
	{
		Name: "sqlite-readable-check-opens-the-ledger", Breaks: "a plan's read-only open leaves the SQLite locks its own process holds on the ledger in place",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\terr := canRead(path)\n",
		Replace: "\tf, err := os.Open(path)\n\tif err == nil {\n\t\terr = f.Close()\n\t}\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyOpenKeepsThisProcessLocks"}}},
	},
	{
		Name: "sqlite-access-check-reads-mode-bits", Breaks: "a plan's checks that it may read the SQLite ledger and write its directory see ACLs where the kernel has no faccessat2",
		File:    "internal/database/sqlite_eaccess_linux.go",
		Search:  "\tif os.Getuid() == os.Geteuid() && os.Getgid() == os.Getegid() {\n",
		Replace: "\tif os.Getuid() == os.Geteuid() && false {\n",
		Checks: []Check{{Package: "./internal/database", Tests: []string{
			"TestSQLiteReadOnlyACLReadableFileWithoutFaccessat2", "TestSQLiteReadOnlyACLWritableDirWithoutFaccessat2",
		}}},
	},
	{
		Name: "sqlite-out-of-wal-mode-read-waits-as-for-leftover-files", Breaks: "a plan as a user who cannot write the SQLite ledger file reads it while it is out of WAL mode",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\t\tif refusal != refusedRollbackMode && s.wouldLeaveFiles() {\n",
		Replace: "\t\tif s.wouldLeaveFiles() || refusal == refusedRollbackMode && false {\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyOutOfWALMode"}}},
	},
	{
		Name: "sqlite-empty-file-read-waits-as-for-leftover-files", Breaks: "a plan as a user who cannot write a SQLite ledger file of 0 bytes reads it as empty",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\"SELECT coalesce((SELECT substr(data, 19, 2) = x'0202' FROM sqlite_dbpage WHERE pgno = 1), 0)\"",
		Replace: "\"SELECT substr(data, 19, 2) = x'0202' FROM sqlite_dbpage WHERE pgno = 1\"",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyEmptyFile"}}},
	},
	{
		Name: "sqlite-snapshot-read-ignores-a-hot-journal", Breaks: "a plan never reads the SQLite ledger without locks beside a -journal that may hold an unfinished transaction",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\tif before.Size() > 0 && journalMayBeHot(s.file+\"-journal\") {\n",
		Replace: "\tif false {\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyJournalLeftBeside"}}},
	},
	{
		Name: "sqlite-journal-beside-an-empty-file-is-hot", Breaks: "a plan as a user who cannot write a SQLite ledger file of 0 bytes reads it as empty beside a -journal, as SQLite does",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\tif before.Size() > 0 && journalMayBeHot(s.file+\"-journal\") {\n",
		Replace: "\tif journalMayBeHot(s.file + \"-journal\") {\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyJournalLeftBeside"}}},
	},
	{
		Name: "sqlite-journal-error-ignores-what-the-read-saw", Breaks: "a plan that waited in vain beside a -journal that may be hot names the journal, from what its read saw",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\t\thotJournal := refusal == refusedHotJournal\n",
		Replace: "\t\thotJournal := false\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyJournalLeftBeside"}}},
	},
	{
		Name: "sqlite-empty-journal-is-hot", Breaks: "a plan as a user who cannot write the SQLite ledger's directory reads it beside an empty -journal, which holds nothing",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\t\treturn !errors.Is(err, io.EOF)\n",
		Replace: "\t\treturn !errors.Is(err, io.ErrUnexpectedEOF)\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyJournalLeftBeside"}}},
	},
	{
		Name: "sqlite-snapshot-read-out-of-wal-mode", Breaks: "a plan never reads the SQLite ledger without locks while it is out of WAL mode (a commit there has no journal file to show it)",
		File:    "internal/database/sqlite_readonly.go",
		Search:  "\t\tif !wal {\n",
		Replace: "\t\tif false {\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyWaitsForARollbackModeCommit"}}},
	},
	{
		Name: "sqlite-snapshot-read-ignores-wal", Breaks: "a plan never reads the SQLite ledger's main file alone while a -wal file holds commits",
		File:    "internal/database/sqlite_readonly.go",
		Search:  `if _, err := os.Lstat(s.file + "-wal"); !errors.Is(err, fs.ErrNotExist) {`,
		Replace: `if _, err := os.Lstat(s.file + "-wal"); false && !errors.Is(err, fs.ErrNotExist) {`,
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestSQLiteReadOnlyDirectoryCrashedWriter"}}},
	},
	{
		// Reading outside the transaction alone is harmless while BEGIN IMMEDIATE holds the file's write
		// lock (nobody can commit in between), and so is a deferred BEGIN alone (WAL snapshots plus the
		// busy retry); together they let two processes decide on the same free slots.
		Name: "sqlite-read-outside-deferred-tx", Breaks: "two processes on one SQLite ledger never oversubscribe a host",
		File:    "internal/database/sqlite.go",
		Search:  "return sqliteUsed(ctx, tx, sqliteUsedQuery)",
		Replace: "return sqliteUsed(ctx, s.db, sqliteUsedQuery)",
		More: []Edit{
			{"return sqliteFind(ctx, tx, sqliteFindQuery, id)", "return sqliteFind(ctx, s.db, sqliteFindQuery, id)"},
			{`q.Set("_txlock", "immediate")`, `q.Set("_txlock", "deferred")`},
		},
		Checks: []Check{{Package: "./internal/database", Tests: []string{"TestConcurrentAllocateAcrossHandles", "TestSQLiteCrossProcess"}}},
	},
	{
		Name: "postgres-lock-removed", Breaks: "two processes on one PostgreSQL ledger never oversubscribe a host",
		File:    "internal/database/postgres.go",
		Search:  "_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key)",
		Replace: "_, err = tx.Exec(ctx, `SELECT $1::bigint`, key)",
		Checks: []Check{
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_twoTerraformProcessesSharePostgresLedger"}},
			{Package: "./internal/database", Tests: []string{"TestConcurrentAllocateAcrossHandles"}},
		},
	},

	{
		// A failed create may undo only what it created: a claim that always reports "created" makes the
		// create that lost a race for a name undo the winner's runtime.
		Name: "creation-always-reported", Breaks: "of two creates of one named runtime at once, only the one that created it may undo it",
		File:    "internal/static/provisioner.go",
		Search:  "\t\tclaimed = current == nil\n",
		Replace: "\t\tclaimed = true\n",
		Checks: []Check{
			{Package: "./internal/static", Tests: []string{"TestConcurrentProvisionsOfOneNameReportOneCreation"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_twoAppliesCreatingOneNameAtOnceLeaveTheWinnersRuntime"}},
		},
	},
	{
		Name: "failed-before-the-claim-undone", Breaks: "a create that made nothing (an unreachable ledger) leaves nothing in state, not a tainted resource",
		File:    "internal/resources/common.go",
		Search:  "\t\treturn res, created, err\n",
		Replace: "\t\treturn res, true, err\n",
		Checks: []Check{
			{Package: "./internal/resources", Tests: []string{"TestProvisionNewUndoesOnlyWhatItCreated"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_createAgainstAnUnreachableLedgerLeavesNothingInState"}},
		},
	},
	{
		Name: "undo-decided-before-the-claim", Breaks: "a create that lost a race for a name and failed leaves the winner's runtime",
		File:    "internal/resources/common.go",
		Search:  "if reporter, ok := p.(provisioner.CreationReporter); ok {",
		Replace: "if reporter, ok := p.(provisioner.CreationReporter); ok && false {",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_twoAppliesCreatingOneNameAtOnceLeaveTheWinnersRuntime"}}},
	},
	{
		Name: "kubernetes-claim-skipped", Breaks: "of two creates of one named Kubernetes runtime at once, only the one that created it may undo it",
		File:    "internal/kubernetes/provisioner.go",
		Search:  "if created, err = claim(ctx, c, objs[0], log); err != nil {",
		Replace: "if created, err = true, error(nil); err != nil {",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationConcurrentCreatesOfOneNameReportOneCreation"}}},
	},
	{
		Name: "kubernetes-claim-never-created", Breaks: "a named Kubernetes runtime's failed create leaves nothing behind",
		File:    "internal/kubernetes/claim.go",
		Search:  "\treturn true, nil\n}\n\n// createdEntryToApply",
		Replace: "\treturn false, nil\n}\n\n// createdEntryToApply",
		Checks: []Check{
			{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationConcurrentCreatesOfOneNameReportOneCreation"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntimeKubernetes_provisionFailingPartWayLeavesNothing"}},
		},
	},
	{
		Name: "kubernetes-claim-keeps-update-entry", Breaks: "a claimed runtime's fields are owned as a server-side apply owns them",
		File:    "internal/kubernetes/claim.go",
		Search:  "if err := rewriteManagedFields(ctx, ri, obj, createdEntryToApply, log); err != nil {",
		Replace: "if err := error(nil); err != nil {",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationConcurrentCreatesOfOneNameReportOneCreation"}}},
	},
	{
		Name: "kubernetes-claim-gives-up-on-writers", Breaks: "a create of a named Kubernetes runtime outlasts the writes that bind its new volume claim",
		File:    "internal/kubernetes/adopt.go",
		Search:  "\t\tcase w.refused != nil && live.GetResourceVersion() == tested:\n",
		Replace: "\t\tcase w.refused != nil && tested != \"\":\n",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationClaimOutlastsWritesToTheVolumeClaimBetweenItsReadAndItsPatch"}}},
	},
	{
		Name: "kubernetes-field-of-another-is-admissions", Breaks: "a container's image or resources another field manager set are drift, unlike what admission made of ours on our own apply",
		File:    "internal/kubernetes/check.go",
		Search:  "\treturn !ownedByAnother(live.ManagedFields, keys...)\n",
		Replace: "\treturn keys != nil\n",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationContainerFieldsRewrittenByAdmissionAreNoDrift"}}},
	},
	{
		Name: "adoption-refused", Breaks: "a retried or interrupted create adopts its own allocation (by ID and name)",
		File:    "internal/static/provisioner.go",
		Search:  "\tdefault:\n\t\treturn nil\n\t}\n\treturn conflict\n",
		Replace: "\tdefault:\n\t\tconflict.Reason = \"mutant: never adopt\"\n\t}\n\treturn conflict\n",
		Checks:  []Check{{Package: "./internal/static", Tests: []string{"TestNamedProvisionAdoptsItsOwnAllocationAndRecordsItsArguments"}}},
	},
	{
		Name: "adoption-of-anothers-allocation", Breaks: "an allocation of another provisioner is never taken over",
		File:    "internal/static/provisioner.go",
		Search:  "case owner != \"\" && current.Provisioner != owner:",
		Replace: "case false:",
		Checks:  []Check{{Package: "./internal/static", Tests: []string{"TestProvisionRefusesAnotherProvisionersOrNamesAllocation"}}},
	},
	{
		Name: "import-owner-unchecked", Breaks: "import refuses a runtime of another provisioner",
		File:    "internal/resources/runtime_names.go",
		Search:  "if o.Owner != \"\" && o.Owner != provisionerName {",
		Replace: "if false && o.Owner != provisionerName {",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_importRefusesAnotherProvisionersRuntime"}}},
	},
	{
		Name: "postgres-lock-wait-unbounded", Breaks: "a write waits for a stuck ledger lock at most LockWait, and says so",
		File:    "internal/database/postgres.go",
		Search:  "fmt.Sprintf(`SET LOCAL lock_timeout = %d`, LockWait.Milliseconds())",
		Replace: "fmt.Sprintf(`SET LOCAL lock_timeout = %d`, 0*LockWait.Milliseconds())",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestAllocateGivesUpOnAStuckWriterAndSaysSo"}}},
	},
	{
		Name: "sqlite-lock-wait-unbounded", Breaks: "a write waits for a stuck ledger lock at most LockWait, and says so",
		File:    "internal/database/sqlite.go",
		Search:  "\t\tcase now.Sub(lastProgress) >= LockWait:\n",
		Replace: "\t\tcase false && now.Sub(lastProgress) >= LockWait:\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestAllocateGivesUpOnAStuckWriterAndSaysSo"}}},
	},
	{
		Name: "queued-write-unnamed-wait", Breaks: "a write queued behind a stuck ledger lock in this process says what it waited for and how long",
		File:    "internal/database/sqlite.go",
		Search:  "\t\treturn &LockedError{Location: s.location, Waited: time.Since(start),\n\t\t\tCause: fmt.Errorf(\"queued behind this process's other writes to the ledger: %w\", ctx.Err())}\n",
		Replace: "\t\t_ = start\n\t\treturn fmt.Errorf(\"waiting for this process's other writes to the ledger: %w\", ctx.Err())\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestAWriteQueuedBehindAnotherWaitingForAStuckWriterSaysSo"}}},
	},
	{
		Name: "postgres-table-lock-timeout-unnamed", Breaks: "a PostgreSQL allocation that gives up on a table lock says what it waited for and how long",
		File:    "internal/database/postgres.go",
		Search:  "\tcase isLockTimeout(err) && !errors.As(err, &locked):\n",
		Replace: "\tcase false && isLockTimeout(err) && !errors.As(err, &locked):\n",
		Checks:  []Check{{Package: "./internal/database", Tests: []string{"TestPostgresAllocateGivesUpOnATableLockAndSaysSo"}}},
	},
	{
		Name: "ledger-identity-unchecked", Breaks: "a runtime recorded in another ledger is an error, never \"gone\"",
		File:    "internal/static/ledger.go",
		Search:  "\tcase recorded != \"\" && cur.ID != recorded:\n",
		Replace: "\tcase false:\n",
		Checks: []Check{
			{Package: "./internal/static", Tests: []string{"TestARuntimeInAnotherLedgerIsAnErrorNeverGone"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_anotherPostgresLedgerIsRefused"}},
		},
	},

	// The contract's sizes and set.
	{
		Name: "memory-per-slot", Breaks: "each slot grants 4 GB of memory",
		File:    "internal/provisioner/resources.go",
		Search:  "MemoryGBPerSlot     = 4",
		Replace: "MemoryGBPerSlot     = 3",
		Checks:  []Check{{Package: "./internal/provisioner", Tests: []string{"TestRuntimeConfigRoundTripAndSizes"}}},
	},
	{
		Name: "unknown-type-skipped", Breaks: "an unknown provisioner type fails the plan",
		File:    "internal/provisioner/registry.go",
		Search:  "\t\tif _, ok := Initializers[typ]; !ok {\n",
		Replace: "\t\tif _, ok := Initializers[typ]; !ok {\n\t\t\tcontinue\n\t\t}\n\t\tif false {\n",
		Checks:  []Check{{Package: "./internal/provisioner", Tests: []string{"TestNewSetErrorsNameTheProvisionerAndField"}}},
	},

	// The Terraform layer.
	{
		Name: "read-drops-state-on-any-error", Breaks: "an unreachable cluster is an error, never \"gone\"",
		File:    "internal/resources/common.go",
		Search:  "if errors.Is(err, provisioner.ErrResourceNotFound) {",
		Replace: "if errors.Is(err, provisioner.ErrResourceNotFound) || err != nil {",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntimeKubernetes_anotherOrUnreachableClusterIsAnErrorNeverGone"}}},
	},
	{
		Name: "drift-never-reported", Breaks: "drift found by refresh is planned as an update",
		File:    "internal/resources/runtime_resource.go",
		Search:  "for _, d := range observed.Drift {",
		Replace: "for _, d := range observed.Drift[:0] {",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntimeKubernetes_deploymentDeletedByHandIsPlannedForRecreation"}}},
	},
	{
		Name: "failed-create-forgets-where", Breaks: "a runtime kept tainted after a failed create is destroyed where its objects are",
		File:    "internal/kubernetes/provisioner.go",
		Search:  "\t\t\treturn nil, false, err\n\t\t}\n\t\treturn placed(r, ns, pid, cluster, c.config.Host), created, err",
		Replace: "\t\t\treturn nil, false, err\n\t\t}\n\t\treturn nil, created, err",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntimeKubernetes_failedCreateKeptTaintedIsDestroyedWhereItsObjectsAre"}}},
	},
	{
		Name: "create-skips-cleanup", Breaks: "a Provision failing part-way leaves nothing behind (rill_runtime and rill_clickhouse)",
		File:    "internal/resources/common.go",
		Search:  "err := c.p.Deprovision(ctx, &provisioner.Resource{ID: id, Type: rt, State: stateOf(partial)})",
		Replace: "err := ctx.Err()",
		Checks: []Check{
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccClickHouse_failedCreateLeavesNothingUntracked"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntimeKubernetes_provisionFailingPartWayLeavesNothing"}},
		},
	},
	{
		Name: "refresh-writes", Breaks: "plan (refresh) writes nothing anywhere",
		File:    "internal/resources/runtime_resource.go",
		Search:  "res, err := c.p.CheckResource(c.ctx, r.resource(&state, c.privState), opts)",
		Replace: "res, err := c.p.Provision(c.ctx, r.resource(&state, c.privState), opts)",
		Checks: []Check{
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_outOfBandLedgerChangeIsPlannedBack"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntimeKubernetes_planWritesNothing"}},
		},
	},
	{
		Name: "replaced-named-runtime-deprovisioned", Breaks: "create_before_destroy on a named runtime keeps the runtime for the new instance",
		File:    "internal/resources/runtime_resource.go",
		Search:  "if r.client.named.provisioned.has(state.ID.ValueString()) {",
		Replace: "if false && r.client.named.provisioned.has(state.ID.ValueString()) {",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_createBeforeDestroyOfANamedRuntimeKeepsIt"}}},
	},
	{
		Name: "adoption-not-warned", Breaks: "the plan of a named runtime that the ledger holds already says that the apply adopts it",
		File:    "internal/resources/runtime_resource.go",
		Search:  "if !named || !warnIfAdopting(",
		Replace: "if !named || true || !warnIfAdopting(",
		Checks: []Check{
			{Package: "./internal/resources", Tests: []string{"TestPlanOfANamedRuntimeAllocatedAlreadySaysTheApplyAdoptsIt"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccRuntime_twoWorkspacesOnOnePoolWarnOfASharedName"}},
		},
	},
	{
		Name: "free-slots-not-subtracting-used", Breaks: "rill_provisioners reports the free slots of a pool",
		File:    "internal/resources/provisioners_data_source.go",
		Search:  "f := max(int64(h.Slots)-int64(h.UsedSlots), 0)",
		Replace: "f := max(int64(h.Slots), 0)",
		Checks:  []Check{{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccProvisionersDataSource_reportsUseAndFreeSlotsPerHost"}}},
	},

	// Kubernetes and ClickHouse.
	{
		Name: "await-ready-returns-at-once", Breaks: "apply returns when the runtime is ready, or fails with the pod's reason",
		File:    "internal/kubernetes/ready.go",
		Search:  "\trw := &rolloutWatch{",
		Replace: "\treturn nil\n\trw := &rolloutWatch{",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationAwaitReadyFailsFastWithThePodsReason"}}},
	},
	{
		Name: "kubernetes-update-reads-nothing", Breaks: "an update never shrinks a Kubernetes runtime's volume (only a fresh ID skips the reads)",
		File:    "internal/kubernetes/provisioner.go",
		Search:  "\tat := objectsMayExist\n",
		Replace: "\tat := freshID\n",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationSlotsGrowTheVolumeButNeverShrinkIt"}}},
	},
	{
		Name: "kubernetes-fresh-create-reads", Breaks: "the create of an unnamed Kubernetes runtime asks the API server less than kubectl does",
		File:    "internal/kubernetes/provisioner.go",
		Search:  "\tcase creating && opts.Name == \"\":\n",
		Replace: "\tcase false:\n",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationCreatingAnUnnamedRuntimeSendsSixRequests"}}},
	},
	{
		Name: "kubernetes-exists-gets-each-object", Breaks: "the plan-time adoption check of N named Kubernetes runtimes costs one LIST per kind, not a GET per object",
		File:    "internal/kubernetes/exists.go",
		Search:  "names, p.reads.listed)",
		Replace: "names, p.reads.get)",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationResourceExistsCostsOneListPerKind"}}},
	},
	{
		Name: "create-check-expires", Breaks: "a plan of many new rill_clickhouse waits for an unreachable server's timeout once, not once per -parallelism wave",
		File:    "internal/resources/capacity_plan.go",
		Search:  "fmt.Sprintf(\"provisioner %q's check that it can create a %s\", name, rt), 0,",
		Replace: "fmt.Sprintf(\"provisioner %q's check that it can create a %s\", name, rt), capacityMaxAge,",
		Checks:  []Check{{Package: "./internal/resources", Tests: []string{"TestPlanCreateCheckIsAskedOncePerCommandAcrossWaves"}}},
	},
	{
		Name: "adoption-check-retried", Breaks: "a plan of many new named runtimes waits for an unanswering cluster or ledger once, not once per -parallelism wave",
		File:    "internal/resources/runtime_names.go",
		Search:  "\t\t\treads.untold.add(provisionerName)\n",
		Replace: "",
		Checks:  []Check{{Package: "./internal/resources", Tests: []string{"TestPlanAdoptionCheckThatCannotBeAnsweredIsNotAskedAgain"}}},
	},
	{
		Name: "list-repair-ignores-own-update", Breaks: "a list repaired once by the apply still follows the templates (a new data_dir moves its mount)",
		File:    "internal/kubernetes/lists.go",
		Search:  "ours := mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply",
		Replace: "ours := mf.Manager == FieldManager",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffOwnUpdateLeftByARepairStillEdits", "TestIntegrationRepairedListFollowsTheTemplatesAfter"}}},
	},
	{
		Name: "admission-entries-drift", Breaks: "an entry the cluster's admission adds to every Deployment is no drift (the plan after an apply is empty)",
		File:    "internal/kubernetes/lists.go",
		Search:  "adm := admissionEdits{added: true, rewritten: true, others: othersOwning(live.GetManagedFields(), fieldKeys(l.path)...)}",
		Replace: "adm := admissionEdits{added: false, rewritten: true, others: othersOwning(live.GetManagedFields(), fieldKeys(l.path)...)}",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffIgnoresServerDefaultsOnly"}}},
	},
	{
		Name: "admission-values-drift", Breaks: "a value of a list the cluster's admission rewrote on our own apply (an env value a policy moves) is no drift (the plan after an apply is empty)",
		File:    "internal/kubernetes/lists.go",
		Search:  " || adm.rewritten && !isUnset(have) && len(adm.others) == 0 && !isKeyField(path) {",
		Replace: " {",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffIgnoresServerDefaultsOnly", "TestIntegrationContainerFieldsRewrittenByAdmissionAreNoDrift"}}},
	},
	{
		Name: "admission-renames-entries", Breaks: "an entry of a list removed by hand is drift even when admission added another in its place",
		File:    "internal/kubernetes/lists.go",
		Search:  " && !isKeyField(path) {",
		Replace: " {",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffIgnoresServerDefaultsOnly"}}},
	},
	{
		Name: "list-values-of-another-are-admissions", Breaks: "a value of a list another field manager set (kubectl set env, edit) is drift, and the apply takes it back",
		File:    "internal/kubernetes/lists.go",
		Search:  " && len(adm.others) == 0 && !isKeyField(path) {",
		Replace: " && !isKeyField(path) {",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffIgnoresServerDefaultsOnly", "TestIntegrationContainerFieldsRewrittenByAdmissionAreNoDrift"}}},
	},
	{
		Name: "argument-drift-shows-values", Breaks: "the drift of a command-line argument edited by hand does not show the token it holds",
		File:    "internal/kubernetes/lists.go",
		Search:  "\t\treturn \"command-line arguments\"\n",
		Replace: "\t\treturn \"\"\n",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffShowsNoValueThatMayBeASecret"}}},
	},
	{
		Name: "default-fields-drift", Breaks: "what the API server defaults in a container (imagePullPolicy, a port's protocol) is no drift beside a hand edit",
		File:    "internal/kubernetes/lists.go",
		Search:  "\tif len(owned) == 0 {\n",
		Replace: "\tif true {\n",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestListDiffNamesFieldsAddedByHand"}}},
	},
	{
		Name: "added-field-not-repaired", Breaks: "a field added by hand inside an entry (readOnly on a mount) is removed by the apply",
		File:    "internal/kubernetes/lists.go",
		Search:  "d = l.addedDiff(live, obj)",
		Replace: "_ = l.addedDiff(live, obj)",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationListEditedByHandIsDriftAndRepairedByTheApply"}}},
	},
	{
		Name: "mapper-ignores-scope", Breaks: "templates must render namespaced objects (a cluster-scoped kind is refused)",
		File:    "internal/kubernetes/mapper.go",
		Search:  "namespaced: r.Namespaced}",
		Replace: "namespaced: true}",
		Checks:  []Check{{Package: "./internal/kubernetes", Tests: []string{"TestIntegrationTemplatesMayRenderOtherKinds"}}},
	},
	{
		Name: "clickhouse-dial-outlives-the-context", Breaks: "a ClickHouse server that never answers holds an operation only until its timeout or a Ctrl-C",
		File:    "internal/clickhouse/session.go",
		Search:  "\tcase <-ctx.Done():\n\t\tif write {",
		Replace: "\tcase <-make(chan struct{}):\n\t\tif write {",
		Checks:  []Check{{Package: "./internal/clickhouse", Tests: []string{"TestCallsToAServerThatNeverAnswersEndWithTheirContext"}}},
	},
	{
		Name: "clickhouse-abandoned-statement-overtaken", Breaks: "the undo of an interrupted create reaches ClickHouse after the statement it undoes, so nothing is left in no state",
		File:    "internal/clickhouse/session.go",
		Search:  "\tearlier := s.unfinished()\n",
		Replace: "\tearlier := s.unfinished()[:0]\n",
		Checks:  []Check{{Package: "./internal/clickhouse", Tests: []string{"TestAStatementGivenUpOnReachesTheServerBeforeLaterCalls"}}},
	},
	{
		Name: "clickhouse-half-is-gone", Breaks: "a rill_clickhouse whose user or database alone is left stays in state, so the plan re-creates the missing half and a destroy drops the rest",
		File:    "internal/clickhouse/provision.go",
		Search:  "\tcase len(users) == 0 || len(dbs) == 0:\n",
		Replace: "\tcase len(users) == 0 || len(dbs) == 0:\n\t\treturn nil, provisioner.ErrResourceNotFound\n\tcase false:\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestCheckResourceOfAHalfPresentResourceKeepsItAndTheUpdateRecreatesTheMissingHalf_fake"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccClickHouse_destroyKilledBetweenItsTwoDropsIsFinishedByTheNextDestroy"}},
		},
	},
	{
		Name: "clickhouse-rill-import-gone", Breaks: "an import of a ClickHouse resource made by Rill's admin service finds Rill's user and database",
		File:    "internal/clickhouse/provision.go",
		Search:  "\t\treturn p.adoptRill(ctx, r)\n",
		Replace: "\t\treturn nil, provisioner.ErrResourceNotFound\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestImportOfARillMadeResourceAdoptsRillsNamesAndEveryLaterCallUsesThem_fake"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccClickHouse_importOfResourcesMadeByRillsAdminServiceKeepsTheirNames"}},
		},
	},
	{
		Name: "clickhouse-rill-names-rederived", Breaks: "a rill_clickhouse adopted from Rill's admin service is updated and destroyed under Rill's names, not ours",
		File:    "internal/clickhouse/naming.go",
		Search:  "\treturn name == userName(resourceID) || name == rillUserName(resourceID)\n",
		Replace: "\treturn name == userName(resourceID)\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestImportOfARillMadeResourceAdoptsRillsNamesAndEveryLaterCallUsesThem_fake"}},
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccClickHouse_importOfResourcesMadeByRillsAdminServiceKeepsTheirNames"}},
		},
	},
	{
		Name: "clickhouse-rill-names-guard-everyone", Breaks: "a destroy of a resource of ours refuses a state naming a database of Rill's admin service",
		File:    "internal/clickhouse/naming.go",
		Search:  "\treturn isRillUser(resourceID, user) && rillDatabaseKind(resourceID, name) != rillNone\n",
		Replace: "\treturn rillDatabaseKind(resourceID, name) != rillNone\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestDeprovisionRefusesStateNamingSomeoneElsesObjects"}},
		},
	},
	{
		Name: "clickhouse-rill-shared-database-adopted", Breaks: "an import refuses a database Rill's admin service gave several resources",
		File:    "internal/clickhouse/provision.go",
		Search:  "\t\t\tif sharers != \"\" {\n\t\t\t\treturn fail(",
		Replace: "\t\t\tif false {\n\t\t\t\treturn fail(",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestImportRefusesADatabaseRillGaveTwoResources_fake"}},
		},
	},
	{
		Name: "clickhouse-rill-shared-database-dropped", Breaks: "a destroy refuses to drop a database Rill's admin service gave another resource since the import",
		File:    "internal/clickhouse/provision.go",
		Search:  "\t\tif !isRillUser(r.ID, user) || rillDatabaseKind(r.ID, db) != rillUndetermined {\n",
		Replace: "\t\tif true {\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestDestroyOfAnAdoptedDatabaseRillGaveAnotherResourceSinceRefuses_fake"}},
		},
	},
	{
		Name: "clickhouse-failed-create-records-nothing", Breaks: "a failed create kept in state whose objects are gone is planned for re-creation, not looked up as Rill's",
		File:    "internal/clickhouse/provision.go",
		Search:  "\tif err := p.execAll(ctx, conn, r.ID, password, stmts); err != nil {\n\t\treturn made, true, err\n",
		Replace: "\tif err := p.execAll(ctx, conn, r.ID, password, stmts); err != nil {\n\t\treturn nil, true, err\n",
		Checks: []Check{
			{Package: "./internal/resources", Acc: true, Tests: []string{"TestAccClickHouse_failedCreateWhoseObjectsAreGoneIsGoneBesideRillsDatabases"}},
		},
	},
	{
		Name: "clickhouse-rill-id-in-capitals", Breaks: "an import of a Rill resource by its ID in capitals says to use its lowercase",
		File:    "internal/clickhouse/provision.go",
		Search:  "\tif lower := strings.ToLower(r.ID); lower != r.ID {\n",
		Replace: "\tif lower := strings.ToLower(r.ID); lower != r.ID && false {\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestImportOfARillIDInCapitalsSaysToUseItsLowercase_fake"}},
		},
	},
	{
		Name: "clickhouse-rill-renamed-database-left", Breaks: "an import of a Rill user whose default database is gone adopts its database renamed to another name Rill gives the ID",
		File:    "internal/clickhouse/provision.go",
		Search:  "\tif !dbExists {\n\t\t// No user, a user without a default database",
		Replace: "\tif !dbExists && (!userExists || db == \"\") {\n\t\t// No user, a user without a default database",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestImportOfARillUserWhoseDatabaseWasRenamedAdoptsTheRenamedDatabase_fake"}},
		},
	},
	{
		Name: "clickhouse-rill-user-left-on-reimport", Breaks: "a re-import of a Rill user given our database keeps Rill's user instead of adding ours",
		File:    "internal/clickhouse/provision.go",
		Search:  "\t\tif rill != \"\" {\n\t\t\tuser, users = rill, []string{rill}\n",
		Replace: "\t\tif false {\n\t\t\tuser, users = rill, []string{rill}\n",
		Checks: []Check{
			{Package: "./internal/clickhouse", Tests: []string{"TestReimportOfARillUserGivenOurDatabaseKeepsRillsUser_fake"}},
		},
	},
	{
		Name: "empty-clickhouse-password", Breaks: "every ClickHouse user gets a long random password",
		File:    "internal/clickhouse/naming.go",
		Search:  "\treturn string(out), nil\n",
		Replace: "\treturn \"\", nil\n",
		Checks:  []Check{{Package: "./internal/clickhouse", Tests: []string{"TestPasswordsAreLongRandomAndAlphanumeric"}}},
	},

	// Secrets never reach logs or diagnostics.
	{
		Name: "masking-off", Breaks: "TF_LOG never shows a secret",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.NewSubsystem(ctx, Subsystem)\n",
		Replace: "\tctx = tflog.NewSubsystem(ctx, Subsystem)\n\tif true {\n\t\treturn ctx\n\t}\n",
		Checks:  []Check{loggingTests, secretsCLI},
	},
	{
		Name: "dsn-password-pattern-removed", Breaks: "a DSN's password in free text is masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tregexp.MustCompile(`(?i)(://[^:/@\\s]*:)[^@\\s]+(@)`),\n",
		Replace: "",
		Checks:  []Check{loggingTests, providerSetErrors},
	},
	{
		Name: "password-keyword-pattern-removed", Breaks: "password=... in free text is masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tregexp.MustCompile(`(?i)(password=)[^&\\s]+`),\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "secret-key-token-dropped", Breaks: "fields named token are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  `"token", `,
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "root-field-key-masking-off", Breaks: "the Terraform layer's secret fields are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.MaskFieldValuesWithFieldKeys(ctx, SecretFieldKeys...)\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "provisioner-field-key-masking-off", Breaks: "provisioners' secret zap fields are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.SubsystemMaskFieldValuesWithFieldKeys(ctx, Subsystem, SecretFieldKeys...)\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "root-value-masking-off", Breaks: "passwords inside the Terraform layer's field values are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.MaskAllFieldValuesRegexes(ctx, secretValuePatterns...)\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "provisioner-value-masking-off", Breaks: "passwords inside provisioners' field values are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.SubsystemMaskAllFieldValuesRegexes(ctx, Subsystem, secretValuePatterns...)\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "root-message-masking-off", Breaks: "passwords inside the Terraform layer's messages are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.MaskMessageRegexes(ctx, secretValuePatterns...)\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "provisioner-message-masking-off", Breaks: "passwords inside provisioners' messages are masked",
		File:    "internal/logging/tflog_core.go",
		Search:  "\tctx = tflog.SubsystemMaskMessageRegexes(ctx, Subsystem, secretValuePatterns...)\n",
		Replace: "",
		Checks:  []Check{loggingTests},
	},
	{
		Name: "diagnostic-masking-off", Breaks: "diagnostics never show a password",
		File:    "internal/logging/tflog_core.go",
		Search:  "\t\ts = re.ReplaceAllString(s, \"${1}***${2}\")\n",
		Replace: "\t\t_ = re.ReplaceAllString(s, \"${1}***${2}\")\n",
		Checks:  []Check{loggingTests, providerSetErrors},
	},
	{
		Name: "set-error-unmasked", Breaks: "a set error, at plan or at apply time, never shows a password",
		File:    "internal/provider/provider.go",
		Search:  "diags.AddAttributeError(path.Root(\"provisioner_set_json\"), summary, logging.MaskString(err.Error())+from)",
		Replace: "diags.AddAttributeError(path.Root(\"provisioner_set_json\"), summary, err.Error()+from)",
		Checks:  []Check{providerSetErrors},
	},
}
