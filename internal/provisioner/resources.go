package provisioner

import (
	"errors"
	"fmt"

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
)

// RuntimeArgs describe the expected arguments for provisioning a runtime resource.
type RuntimeArgs struct {
	Slots   int    `mapstructure:"slots"`
	Version string `mapstructure:"version"`
	// Hibernated asks for the runtime to be stopped while keeping its data and its reservation
	// (Kubernetes scales to zero and keeps the PVC and Service; a static pool keeps the slots).
	// An addition to Rill's design; absent means false.
	Hibernated bool `mapstructure:"hibernated"`
}

// NewRuntimeArgs decodes runtime args from a plain map. Numbers may be Go ints, int64 (as Terraform
// hands them), float64 or json.Number (as JSON decoders hand them); fractions, wrong types and unknown
// keys are errors naming the field, and slots must be at least 1.
func NewRuntimeArgs(args map[string]any) (*RuntimeArgs, error) {
	res := &RuntimeArgs{}
	if err := decodeMap(args, res, "mapstructure"); err != nil {
		return nil, err
	}
	if res.Slots < 1 {
		return nil, Errorf("slots", "must be at least 1, got %d", res.Slots)
	}
	return res, nil
}

// AsMap returns the args as a plain map (the inverse of NewRuntimeArgs), every field under its tag.
func (r *RuntimeArgs) AsMap() map[string]any { return asMap(r) }

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

// ClickhouseConfig describes the expected config for a provisioned Clickhouse resource.
type ClickhouseConfig struct {
	DSN string `mapstructure:"dsn"`
}

// NewClickhouseConfig decodes a ClickHouse config; unknown keys are ignored.
func NewClickhouseConfig(cfg map[string]any) (*ClickhouseConfig, error) {
	res := &ClickhouseConfig{}
	if err := decodeLenient(cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

// AsMap returns the config as a plain map (the inverse of NewClickhouseConfig).
func (r *ClickhouseConfig) AsMap() map[string]any { return asMap(r) }

func decodeLenient(in map[string]any, out any) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: out, DecodeHook: strictNumberHook})
	if err != nil {
		return err
	}
	if err := d.Decode(in); err != nil {
		var fe *FieldError
		if err := stripRootName(fieldErrorFromMapstructure(err), out); errors.As(err, &fe) {
			return fe
		}
		return fmt.Errorf("decoding config: %w", err)
	}
	return nil
}
