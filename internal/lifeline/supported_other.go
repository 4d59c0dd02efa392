//go:build !windows

package lifeline

const supported = true
