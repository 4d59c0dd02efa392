package static

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/rill-provisioner/terraform-provider-rill/internal/database"
)

// Assignment is one runtime's slots on a host as other bookkeeping has it: a row of Rill's admin
// service's static_runtime_assignments(resource_id, host, slots), say.
type Assignment struct {
	ResourceID string
	Host       string
	Slots      int
}

// ImportReport says what Import did with each assignment.
type ImportReport struct {
	Imported []Assignment // recorded in the ledger now
	Present  []Assignment // already in the ledger on the same host (an earlier import, say)
	// Released were recorded by an earlier run and are no longer in the ledger (a terraform destroy
	// freed them): not recorded again (database.MigrationMarks).
	Released []Assignment
}

// errReleased is what Import's placement returns for an assignment that an earlier run recorded and
// that is no longer in the ledger.
var errReleased = errors.New("released since it was migrated")

// ErrHostNotInSpec is wrapped by Import's error for an assignment whose host is not in the pool's spec.
var ErrHostNotInSpec = errors.New("is not in the static pool's spec")

// Import records assignments made elsewhere in the ledger, so that the runtimes they belong to can be
// imported into Terraform (`<provisioner>/<resource ID>`) and so that new runtimes are placed around
// them. Each assignment is one Allocate (one atomic decision under the ledger's lock, like a
// placement), and none double-books a host: an assignment whose host is not in this pool's spec,
// whose host has no room left for it, or whose resource is already allocated on another host is not
// recorded, and is reported in the error (the others still are). Running it again records only what
// is new: each recorded (or present) assignment is marked in the ledger when it supports marks
// (database.MigrationMarks), and one marked but no longer allocated is reported as Released.
func (p *Provisioner) Import(ctx context.Context, assignments []Assignment) (*ImportReport, error) {
	report := &ImportReport{}
	var errs, unmarked []error
	marks, _ := p.db.(database.MigrationMarks)
	for _, a := range assignments {
		migrated := false
		if marks != nil {
			var err error
			if migrated, err = marks.Migrated(ctx, a.ResourceID); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		// The pool's spec names its hosts in canonical form (hosturl.Canonical, as ParseSpec does), and
		// so do the ledger's rows after its migration: an assignment spelled "http://H1:9091/" is that
		// host, counted against its slots and recorded under the spec's spelling. A host that does not
		// parse is kept as given, and is then not in the spec.
		a.Host = canonicalHost(a.Host)
		present, ledgerSlots := false, 0
		_, err := p.db.Allocate(ctx, a.ResourceID, func(current *database.Allocation, used map[string]int) (*database.Allocation, error) {
			present = false
			if current != nil {
				if canonicalHost(current.Host) != a.Host {
					return nil, fmt.Errorf("runtime %s: the ledger has it on host %s, the assignment on %s", a.ResourceID, current.Host, a.Host)
				}
				present, ledgerSlots = true, current.Slots
				return current, nil
			}
			if migrated {
				return nil, errReleased
			}
			rt := p.spec.host(a.Host)
			if rt == nil {
				return nil, fmt.Errorf("runtime %s: host %s %w (runtimes[].host)", a.ResourceID, a.Host, ErrHostNotInSpec)
			}
			if a.Slots < 1 {
				return nil, fmt.Errorf("runtime %s: %d slots", a.ResourceID, a.Slots)
			}
			used = canonicalUsed(used)
			if used[rt.Host]+a.Slots > rt.Slots {
				return nil, fmt.Errorf("runtime %s: host %s has %d of %d slots in use, %d more would double-book it",
					a.ResourceID, rt.Host, used[rt.Host], rt.Slots, a.Slots)
			}
			return &database.Allocation{ResourceID: a.ResourceID, Provisioner: p.NameInSet(), Host: rt.Host, Slots: a.Slots}, nil
		})
		switch {
		case errors.Is(err, errReleased):
			report.Released = append(report.Released, a)
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case present:
			a.Slots = ledgerSlots // the ledger's, which Terraform may have resized since
			report.Present = append(report.Present, a)
		default:
			report.Imported = append(report.Imported, a)
			p.logger.Info("imported runtime assignment", zap.String("resource_id", a.ResourceID), zap.String("host", a.Host), zap.Int("slots", a.Slots))
		}
		if marks != nil && !migrated {
			// After the allocation: a run stopped between the two leaves it unmarked, and the next run
			// finds it present and marks it.
			if err := marks.MarkMigrated(ctx, a.ResourceID); err != nil {
				// In the ledger all the same: not an assignment "not imported", which would contradict
				// its report, but one a run after its destroy would record again.
				unmarked = append(unmarked, fmt.Errorf("runtime %s: %w", a.ResourceID, err))
			}
		}
	}
	var failed []error
	if len(errs) > 0 {
		failed = append(failed, fmt.Errorf("%d of %d assignments not imported: %w", len(errs), len(assignments), errors.Join(errs...)))
	}
	if len(unmarked) > 0 {
		failed = append(failed, fmt.Errorf("%d of %d assignments are in the ledger but not marked as migrated, so a run after their "+
			"destroy would record them again; run the command again once the ledger takes the marks: %w", len(unmarked), len(assignments), errors.Join(unmarked...)))
	}
	return report, errors.Join(failed...)
}

// HasHost reports whether host, in any spelling of the same URL, is a host of the spec.
func (s *Spec) HasHost(host string) bool { return s.host(host) != nil }

// HasHost reports whether host, in any spelling of the same URL, is a host of the pool's spec.
func (p *Provisioner) HasHost(host string) bool { return p.spec.HasHost(host) }
