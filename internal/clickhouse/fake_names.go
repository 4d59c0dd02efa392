package clickhouse

// The names of the stand-in for ClickHouse (fakeserver_tagged.go), which only test builds of the
// provider compile in; here, untagged, so that the tests that build and drive such a provider
// (internal/acctest) name it from its one home.
const (
	// FakeBuildTag is the go build tag that compiles the stand-in into the provider.
	FakeBuildTag = "rill_fake_clickhouse"
	// FakeType is the type name of the fake-backed provisioner in test builds.
	FakeType = "clickhouse-static-fake"
	// FakeStateEnv names the JSON file of the stand-in's users and databases.
	FakeStateEnv = "RILL_FAKE_CLICKHOUSE_STATE"
)
