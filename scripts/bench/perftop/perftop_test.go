package main

import (
	"debug/elf"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// inner and outer are two functions of this test binary for a synthetic profile to name.
//
//go:noinline
func inner() int { return 1 }

//go:noinline
func outer() int { return inner() + 1 }

// fileOffset is where perf would report an address of the running test binary: its offset in the file.
func fileOffset(t *testing.T, exe string, addr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off
		}
	}
	t.Fatalf("address %#x is in no loaded segment of %s", addr, exe)
	return 0
}

// A profile as `perf script -F comm,ip,dso` prints it: samples of two commands, frames in the binary,
// the kernel and another binary. Only the chosen command counts; flat counts the innermost frame,
// cumulative every function on the stack once; frames outside the binary are named as such.
func TestPerftopNamesTheFunctionsOfOneCommandsSamples(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elf.Open(exe); err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	in := fileOffset(t, exe, uint64(reflect.ValueOf(inner).Pointer()))
	out := fileOffset(t, exe, uint64(reflect.ValueOf(outer).Pointer()))
	frame := func(off uint64) string { return fmt.Sprintf("\t%16x (%s)\n", off, exe) }
	kernel := "\tffffffff821f2fa7 ([kernel.kallsyms])\n"
	profile := "terraform 123 \n" + frame(in) + frame(out+1) + "\n" + // inner, called by outer
		"terraform 123 \n" + kernel + frame(out) + "\n" + // the kernel, for outer
		"terraform 123 \n" + frame(out) + frame(out+2) + "\n" + // outer (recursion counts once)
		"terraform-provi 456 \n" + frame(in) + "\n" // another command
	run1 := func(cum bool) string {
		var b strings.Builder
		if err := run(strings.NewReader(profile), &b, "terraform", exe, cum, 10); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	const pkg = "github.com/rill-provisioner/terraform-provider-rill/scripts/bench/perftop."
	flat := run1(false)
	for _, want := range []string{"3 samples of terraform, flat", " 33.33%  " + pkg + "inner\n", " 33.33%  " + pkg + "outer\n", " 33.33%  [kernel or other binary]\n"} {
		if !strings.Contains(flat, want) {
			t.Errorf("flat profile lacks %q:\n%s", want, flat)
		}
	}
	cum := run1(true)
	for _, want := range []string{"3 samples of terraform, cumulative", "100.00%  " + pkg + "outer\n", " 33.33%  " + pkg + "inner\n"} {
		if !strings.Contains(cum, want) {
			t.Errorf("cumulative profile lacks %q:\n%s", want, cum)
		}
	}
	if err := run(strings.NewReader(profile), &strings.Builder{}, "kubectl", exe, false, 10); err == nil || !strings.Contains(err.Error(), `no samples of command "kubectl"`) {
		t.Errorf("a command without samples: %v", err)
	}
}
