// Package logging bridges the provisioners' zap loggers into terraform-plugin-log, so that `TF_LOG`
// (and `TF_LOG_PROVIDER`) show provisioner decisions next to the Terraform layer's own tflog lines, with
// the same masking of secrets.
package logging

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Subsystem is the tflog subsystem provisioner logs are written to ("provisioner" in TF_LOG output).
const Subsystem = "provisioner"

// SecretFieldKeys are log field keys whose values are always masked.
var SecretFieldKeys = []string{"password", "dsn", "write_dsn", "token", "secret", "provisioner_set_json", "ledger_dsn"}

// secretValuePatterns mask secrets inside other values: passwords in URLs and DSNs, and the password
// literals of a ClickHouse user statement (IDENTIFIED [WITH <type>] BY '...'[, <type> BY '...']...,
// escapes and all), which a server's error may quote back; the clickhouse-static provisioner removes
// the passwords it knows from its errors too, and this catches what one it does not know leaves.
// A URL's password is masked to the last "@" before a space or quote (an "@" in the password,
// unescaped, left the rest of it shown; a path with an "@" is masked too, which leaks nothing); the
// second pattern catches a password with a quote in it.
var secretValuePatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(://[^:/@\s]*:)[^\s"']*(@)`),
	regexp.MustCompile(`(?i)(://[^:/@\s]*:)[^@\s]+(@)`),
	regexp.MustCompile(`(?i)(password=)[^&\s]+`),
	regexp.MustCompile(`(?i)(IDENTIFIED(?:\s+WITH\s+\w+)?\s+BY\s+')(?:[^'\\]|\\.)*(?:'\s*,\s*\w+\s+BY\s+'(?:[^'\\]|\\.)*)*(')?`),
}

// WithMasking returns ctx with masking of secrets set up for both the provider's root logger and the
// provisioner subsystem.
func WithMasking(ctx context.Context) context.Context {
	ctx = tflog.NewSubsystem(ctx, Subsystem)
	ctx = tflog.MaskFieldValuesWithFieldKeys(ctx, SecretFieldKeys...)
	ctx = tflog.SubsystemMaskFieldValuesWithFieldKeys(ctx, Subsystem, SecretFieldKeys...)
	ctx = tflog.MaskAllFieldValuesRegexes(ctx, secretValuePatterns...)
	ctx = tflog.SubsystemMaskAllFieldValuesRegexes(ctx, Subsystem, secretValuePatterns...)
	ctx = tflog.MaskMessageRegexes(ctx, secretValuePatterns...)
	ctx = tflog.SubsystemMaskMessageRegexes(ctx, Subsystem, secretValuePatterns...)
	return ctx
}

// MaskString applies the same value masking to a string (for diagnostics, which tflog does not mask).
func MaskString(s string) string {
	for _, re := range secretValuePatterns {
		s = re.ReplaceAllString(s, "${1}***${2}")
	}
	return s
}

// Bridge is a zap logger whose entries go to tflog. Its context can be replaced as requests come in,
// so that entries carry the current request's logger; provisioners keep the same *zap.Logger.
type Bridge struct {
	mu  sync.RWMutex
	ctx context.Context
}

// NewBridge returns a bridge writing through ctx (which should have come through WithMasking).
func NewBridge(ctx context.Context) *Bridge {
	return &Bridge{ctx: ctx}
}

// SetContext points the bridge at a newer request context.
func (b *Bridge) SetContext(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ctx = ctx
}

func (b *Bridge) context() context.Context {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.ctx
}

// Logger returns a zap logger writing to the bridge. Level filtering is left to tflog (TF_LOG).
func (b *Bridge) Logger() *zap.Logger {
	return zap.New(&core{bridge: b})
}

type core struct {
	bridge *Bridge
	fields []zapcore.Field
}

func (c *core) Enabled(zapcore.Level) bool { return true }

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	next := &core{bridge: c.bridge, fields: make([]zapcore.Field, 0, len(c.fields)+len(fields))}
	next.fields = append(append(next.fields, c.fields...), fields...)
	return next
}

func (c *core) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}

func (c *core) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	if e.LoggerName != "" {
		enc.Fields["logger"] = e.LoggerName
	}
	ctx := c.bridge.context()
	if ctx == nil {
		return nil
	}
	msg := e.Message
	switch {
	case e.Level >= zapcore.ErrorLevel:
		tflog.SubsystemError(ctx, Subsystem, msg, enc.Fields)
	case e.Level == zapcore.WarnLevel:
		tflog.SubsystemWarn(ctx, Subsystem, msg, enc.Fields)
	case e.Level == zapcore.InfoLevel:
		tflog.SubsystemInfo(ctx, Subsystem, msg, enc.Fields)
	case e.Level == zapcore.DebugLevel:
		tflog.SubsystemDebug(ctx, Subsystem, msg, enc.Fields)
	default:
		tflog.SubsystemTrace(ctx, Subsystem, fmt.Sprint(msg), enc.Fields)
	}
	return nil
}

func (c *core) Sync() error { return nil }
