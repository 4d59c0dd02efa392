package provisioner

import (
	"errors"
	"math"
	"net/url"
	"strings"

	"github.com/go-viper/mapstructure/v2"
)

// ResourceType enumerates the provisionable resource types.
type ResourceType string

const (
	ResourceTypeRuntime    ResourceType = "runtime"
	ResourceTypeClickHouse ResourceType = "clickhouse"
)

// Valid reports whether r is a known resource type.
func (r ResourceType) Valid() bool {
	switch r {
	case ResourceTypeRuntime, ResourceTypeClickHouse:
		return true
	}
	return false
}

// Annotation keys the Terraform layer sets on ResourceOptions.Annotations besides the user's own.
const (
	// AnnotationEnvironment carries rill_runtime's `environment` attribute (e.g. "prod", "dev").
	AnnotationEnvironment = "environment"
)

// Sizes granted per runtime slot (as in Rill's reference implementation).
const (
	CPUPerSlot          = 1
	MemoryGBPerSlot     = 4
	StorageBytesPerSlot = int64(40) * 1024 * 1024 * 1024
	// BytesPerDiskGB is the unit of RuntimeArgs.OverrideDiskGB: Rill counts a "GB" of disk as 2^30
	// bytes, the same unit as the 40 per slot.
	BytesPerDiskGB = int64(1024 * 1024 * 1024)
)

// DefaultEnvironment is the environment a runtime serves when RuntimeArgs.Environment is empty (as in
// Rill's admin service).
const DefaultEnvironment = "prod"

// LatestVersion is the version that follows the Rill version (ResourceOptions.RillVersion) when one is
// known; it is also what an empty version means.
const LatestVersion = "latest"

// MaxSlots is the most slots one runtime may have: storage_bytes (40 GiB per slot) must fit in 64
// bits, which also keeps the count within what the ledger stores (a 32-bit INTEGER in PostgreSQL).
const MaxSlots = int(math.MaxInt64 / StorageBytesPerSlot) // 214,748,364

// MaxOverrideDiskGB is the largest RuntimeArgs.OverrideDiskGB: its storage bytes (2^30 per GB) must fit
// in 64 bits, or StorageBytes would wrap around to a negative size.
const MaxOverrideDiskGB = math.MaxInt64 / BytesPerDiskGB // 8,589,934,591

// RuntimeArgs describe the expected arguments for provisioning a runtime resource.
type RuntimeArgs struct {
	Slots   int    `mapstructure:"slots"`
	Version string `mapstructure:"version"`
	// Hibernated asks for the runtime to be stopped while keeping its data and its reservation
	// (Kubernetes scales to zero and keeps the PVC and Service; a static pool keeps the slots).
	// An addition to Rill's design; absent means false.
	Hibernated bool `mapstructure:"hibernated"`
	// Environment is the environment of the project the runtime serves ("prod", "dev", ...); empty
	// means DefaultEnvironment (see EnvironmentOrDefault).
	Environment string `mapstructure:"environment"`
	// OverrideDiskGB, when above 0, replaces the slot-based disk size: the runtime gets this many GB
	// (2^30 bytes each) of storage whatever its slots (see StorageBytes).
	OverrideDiskGB int64 `mapstructure:"override_disk_gb"`
}

// NewRuntimeArgs decodes runtime args from a plain map. Numbers may be Go ints, int64 (as Terraform
// hands them), float64 or json.Number (as JSON decoders hand them); fractions, wrong types and unknown
// keys are errors naming the field, and slots must be between 1 and MaxSlots.
func NewRuntimeArgs(args map[string]any) (*RuntimeArgs, error) {
	res := &RuntimeArgs{}
	if _, err := decodeMap(args, res, "mapstructure", true); err != nil {
		return nil, err
	}
	if res.Slots < 1 {
		return nil, Errorf("slots", "must be at least 1, got %d", res.Slots)
	}
	if res.Slots > MaxSlots {
		return nil, Errorf("slots", "must be at most %d, got %d", MaxSlots, res.Slots)
	}
	if res.OverrideDiskGB < 0 {
		return nil, Errorf("override_disk_gb", "must be 0 (no override) or more, got %d", res.OverrideDiskGB)
	}
	if res.OverrideDiskGB > MaxOverrideDiskGB {
		return nil, Errorf("override_disk_gb", "must be at most %d (its storage bytes must fit in 64 bits), got %d", MaxOverrideDiskGB, res.OverrideDiskGB)
	}
	return res, nil
}

// AsMap returns the args as a plain map (the inverse of NewRuntimeArgs), every field under its tag.
func (r *RuntimeArgs) AsMap() map[string]any { return asMap(r) }

// ProjectAnnotations returns the annotations of the project, as Rill's admin service passes them to
// a provisioner: annotations (a ResourceOptions') without the AnnotationEnvironment that the Terraform
// layer adds when `environment` is set, which r.Environment carries too (the attribute and an
// "environment" annotation cannot both be set, so with no environment in r such an annotation is the
// project's own). Never nil.
func (r *RuntimeArgs) ProjectAnnotations(annotations map[string]string) map[string]string {
	out := make(map[string]string, len(annotations))
	for k, v := range annotations {
		if k == AnnotationEnvironment && r.Environment != "" {
			continue
		}
		out[k] = v
	}
	return out
}

// EnvironmentOrDefault returns the runtime's environment, DefaultEnvironment when none is set.
func (r *RuntimeArgs) EnvironmentOrDefault() string {
	if r.Environment == "" {
		return DefaultEnvironment
	}
	return r.Environment
}

// StorageBytes returns the disk the runtime is granted: OverrideDiskGB when set, else 40 GiB per slot.
func (r *RuntimeArgs) StorageBytes() int64 {
	if r.OverrideDiskGB > 0 {
		return r.OverrideDiskGB * BytesPerDiskGB
	}
	_, _, storage := NewRuntimeSizes(r.Slots)
	return storage
}

// ResolveVersion returns the Rill version a runtime runs: its own version, except that "" and "latest"
// follow rillVersion (the provider's rill_version) when that is set, and are "latest" otherwise.
func ResolveVersion(version, rillVersion string) string {
	if version != "" && version != LatestVersion {
		return version
	}
	if rillVersion != "" {
		return rillVersion
	}
	return LatestVersion
}

// RuntimeConfig describes the expected config for a provisioned runtime resource.
type RuntimeConfig struct {
	Host         string `mapstructure:"host"`
	Audience     string `mapstructure:"audience"`
	CPU          int    `mapstructure:"cpu"`
	MemoryGB     int    `mapstructure:"memory_gb"`
	StorageBytes int64  `mapstructure:"storage_bytes"`
}

// NewRuntimeSizes returns the config sizes granted for a number of slots.
func NewRuntimeSizes(slots int) (cpu, memoryGB int, storageBytes int64) {
	return CPUPerSlot * slots, MemoryGBPerSlot * slots, StorageBytesPerSlot * int64(slots)
}

// NewRuntimeConfig decodes a runtime config. Keys it does not know are ignored, so that configs written
// by newer provisioners still decode.
func NewRuntimeConfig(cfg map[string]any) (*RuntimeConfig, error) {
	res := &RuntimeConfig{}
	if err := decodeLenient(cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

// AsMap returns the config as a plain map (the inverse of NewRuntimeConfig).
func (r *RuntimeConfig) AsMap() map[string]any { return asMap(r) }

// ClickhouseConfig describes the expected config for a provisioned Clickhouse resource. DSN, WriteDSN
// and Cluster are Rill's; Database and User are additions (the names inside the DSN, also reported
// when the DSN is not known, as after an import).
type ClickhouseConfig struct {
	// DSN of the resource's database with its own user and password; empty when the password is not
	// known to the provisioner (an import).
	DSN string `mapstructure:"dsn"`
	// WriteDSN, when the provisioner has a separate writer endpoint: the same credentials there.
	WriteDSN string `mapstructure:"write_dsn,omitempty"`
	// Cluster the database and user were created ON CLUSTER; empty when none.
	Cluster  string `mapstructure:"cluster,omitempty"`
	Database string `mapstructure:"database,omitempty"`
	User     string `mapstructure:"user,omitempty"`
}

// NewClickhouseConfig decodes a ClickHouse config; unknown keys are ignored.
func NewClickhouseConfig(cfg map[string]any) (*ClickhouseConfig, error) {
	res := &ClickhouseConfig{}
	if err := decodeLenient(cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

// AsMap returns the config as a plain map (the inverse of NewClickhouseConfig); empty optional
// fields are left out (omitempty), as in Rill.
func (r *ClickhouseConfig) AsMap() map[string]any { return asMap(r) }

// DSNWithoutPassword returns DSN with its password removed (from the user info and from a password
// query parameter), for places that must not hold secrets; "" when DSN is empty or not a URL.
func (r *ClickhouseConfig) DSNWithoutPassword() string { return withoutPassword(r.DSN) }

// WriteDSNWithoutPassword is DSNWithoutPassword for WriteDSN.
func (r *ClickhouseConfig) WriteDSNWithoutPassword() string { return withoutPassword(r.WriteDSN) }

// DSNProxyParam is clickhouse-go's DSN parameter naming an HTTP proxy (http_proxy=http://u:p@proxy:3128,
// escaped), whose password withoutPassword removes too: it showed in dsn_without_password, an
// attribute that is not sensitive (found by a walkthrough).
const DSNProxyParam = "http_proxy"

// withoutPassword works on the text rather than through net/url, which refuses the multi-host form
// (clickhouse://u:p@host1:9000,host2:9000/db) that ClickHouse clients accept.
func withoutPassword(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return ""
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		user, _, _ := strings.Cut(authority[:at], ":")
		authority = user + authority[at:]
	}
	if path, query, ok := strings.Cut(tail, "?"); ok {
		query, fragment, hasFragment := strings.Cut(query, "#")
		var kept []string
		for _, pair := range strings.Split(query, "&") {
			key, value := queryParam(pair)
			switch {
			case pair == "" || key == "password":
			case key == DSNProxyParam:
				// clickhouse-go's proxy URL, whose user info may hold the proxy's password.
				if proxy, err := url.QueryUnescape(value); err == nil && strings.Contains(proxy, "@") {
					if bare := withoutPassword(proxy); bare != "" {
						kept = append(kept, key+"="+url.QueryEscape(bare))
					}
					continue
				}
				kept = append(kept, pair)
			default:
				kept = append(kept, pair)
			}
		}
		tail = path
		if len(kept) > 0 {
			tail += "?" + strings.Join(kept, "&")
		}
		if hasFragment {
			tail += "#" + fragment
		}
	}
	return scheme + "://" + authority + tail
}

// queryParam splits a pair of a DSN's query into its key and value, the key unescaped as
// clickhouse-go reads it (url.ParseQuery: pass%77ord is its password parameter).
func queryParam(pair string) (key, value string) {
	key, value, _ = strings.Cut(pair, "=")
	if k, err := url.QueryUnescape(key); err == nil {
		key = k
	}
	return key, value
}

// ErrEmptyDSNPassword is DSNWithPassword's error for an empty password.
var ErrEmptyDSNPassword = errors.New("password is empty")

// DSNWithPassword returns dsn with password as its user's password: the inverse of
// DSNWithoutPassword, for a client that holds the password it chose (ClickhouseArgs.Password, which
// the provider never stores) and has only the DSN without it. The password goes where clickhouse-go
// reads the user from: beside a username query parameter (which wins over the user info), else
// into the user info (clickhouse://user:password@host:9000/db), escaped for it. Every password
// already in dsn is removed. Like withoutPassword it works on the text, so the multi-host form is
// kept as written. Errors never quote dsn or password.
func DSNWithPassword(dsn, password string) (string, error) {
	if password == "" {
		return "", ErrEmptyDSNPassword
	}
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "" {
		return "", errors.New("dsn is not a URL (expected clickhouse://user@host:9000/database)")
	}
	rest, fragment, hasFragment := strings.Cut(rest, "#")
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	path, query, _ := strings.Cut(tail, "?")
	var params []string
	userParam := false
	for _, pair := range strings.Split(query, "&") {
		switch key, value := queryParam(pair); {
		case pair == "" || key == "password":
			continue
		case key == "username":
			if value == "" {
				// clickhouse-go takes it for the user "" (the server's default user), whatever the user info says.
				return "", errors.New("dsn has an empty username parameter")
			}
			userParam = true
		}
		params = append(params, pair)
	}
	at := strings.LastIndex(authority, "@")
	user := ""
	if at >= 0 {
		user, _, _ = strings.Cut(authority[:at], ":")
	}
	switch {
	case userParam:
		params = append(params, "password="+url.QueryEscape(password))
		if at >= 0 {
			authority = user + authority[at:]
		}
	case user != "":
		authority = user + url.UserPassword("", password).String() + authority[at:]
	default:
		return "", errors.New("dsn names no user (expected clickhouse://user@host:9000/database, or a username parameter)")
	}
	out := scheme + "://" + authority + path
	if len(params) > 0 {
		out += "?" + strings.Join(params, "&")
	}
	if hasFragment {
		out += "#" + fragment
	}
	return out, nil
}

// ClickhouseArgs are the arguments for provisioning a ClickHouse resource (an addition to Rill's
// design, where there are none).
type ClickhouseArgs struct {
	// Password, when set, is the resource user's password (chosen by the caller, e.g. a Terraform
	// write-only attribute); when empty the provisioner generates one.
	Password string `mapstructure:"password,omitempty"`
}

// NewClickhouseArgs decodes ClickHouse args from a plain map; unknown keys are errors naming the field.
func NewClickhouseArgs(args map[string]any) (*ClickhouseArgs, error) {
	res := &ClickhouseArgs{}
	if _, err := decodeMap(args, res, "mapstructure", true); err != nil {
		return nil, err
	}
	return res, nil
}

// AsMap returns the args as a plain map (the inverse of NewClickhouseArgs); an empty password is left out.
func (r *ClickhouseArgs) AsMap() map[string]any { return asMap(r) }

func decodeLenient(in map[string]any, out any) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: out, DecodeHook: strictNumberHook})
	if err != nil {
		return err
	}
	if err := d.Decode(in); err != nil {
		return stripRootName(fieldErrorsFromMapstructure(err), out)
	}
	return nil
}
