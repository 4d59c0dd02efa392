package hosturl

import "testing"

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://h1:9091", "http://h1:9091"},
		{"http://H1:9091", "http://h1:9091"},
		{"HTTP://h1:9091", "http://h1:9091"},
		{"http://h1:9091/", "http://h1:9091"},
		{"http://h1:9091/.", "http://h1:9091"},
		{"http://h1:9091//", "http://h1:9091"},
		{"http://h1.:9091", "http://h1:9091"},
		{"http://h1:80", "http://h1"},
		{"https://h1:443/", "https://h1"},
		{"https://h1:80", "https://h1:80"},
		{"http://h1:", "http://h1"},
		{"  http://h1:9091  ", "http://h1:9091"},
		{"http://h1:9091/rill/./a/../", "http://h1:9091/rill"},
		{"http://[::1]:9091/", "http://[::1]:9091"},
		{"http://[::1]:80", "http://[::1]"},
		{"http://Rt.Example.COM./Base", "http://rt.example.com/Base"}, // paths keep their case
	}
	for _, tc := range cases {
		got, err := Canonical(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if again, _ := Canonical(got); again != got {
			t.Errorf("Canonical is not idempotent on %q: %q", got, again)
		}
	}
}

func TestCanonicalRefusesWhatIsNotAnHTTPHost(t *testing.T) {
	for _, in := range []string{"", "localhost:9091", "h1", "ftp://h1", "http://", "http://.", "http:///path", "mailto:a@b", "http://%zz"} {
		if got, err := Canonical(in); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzCanonical: Canonical never panics, accepts only http(s) URLs with a host, and is idempotent, so
// a host canonicalized by the spec and again by the ledger migration stays the same.
func FuzzCanonical(f *testing.F) {
	for _, seed := range []string{"http://H1:9091/.", "https://h.:443//", "http://[::1]:80", "localhost:9091", "http://h/%2e/", "http://h/a b", "http://h?q#f", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Canonical(in)
		if err != nil {
			return
		}
		again, err := Canonical(got)
		if err != nil || again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", in, got, got, again, err)
		}
	})
}
