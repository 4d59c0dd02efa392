package resources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/rill-provisioner/terraform-provider-rill/internal/provisioner"
	"github.com/rill-provisioner/terraform-provider-rill/internal/waits"
)

// nameValidator checks rill_runtime's `name` at plan time (provisioner.ValidateName).
type nameValidator struct{}

var _ validator.String = nameValidator{}

func (nameValidator) Description(context.Context) string {
	return fmt.Sprintf("%s, at most %d characters", provisioner.NameRule, provisioner.NameMaxLength)
}

func (v nameValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (nameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := provisioner.ValidateName(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid runtime name", "The name "+err.Error()+".")
	}
}

// conflictDetail says what holds a runtime's ID or name, and how to take it over: Terraform prints the
// resource's address with the diagnostic; the import ID is exact.
func conflictDetail(provisionerName string, c *provisioner.IDConflictError) string {
	id := importID(c.Provisioner, c.ID)
	detail := fmt.Sprintf("Provisioner %q: %v.\n\nNothing was changed. If that runtime is this one (for example left by an "+
		"earlier apply), import it under this resource's address (shown above) and give the resource the same name:\n\n"+
		"  terraform import <address> %s\n\nor, in the configuration (Terraform 1.5+):\n\n  import {\n    to = <address>\n    id = %q\n  }",
		provisionerName, c, id, id)
	if c.Provisioner != provisionerName {
		detail += fmt.Sprintf("\n\nThe import needs `provisioner_name = %q`, its owner.", c.Provisioner)
	}
	return detail + "\nOtherwise choose another name."
}

// importMarkKey is a private-state key that ImportState sets and the Read that follows clears: that
// Read checks the runtime's owner and restores what the provisioner recorded.
const importMarkKey = "importing"

func setImportMark(ctx context.Context, private privateState) diag.Diagnostics {
	return private.SetKey(ctx, importMarkKey, []byte("true"))
}

// importMarked reports whether this Read follows an import, leaving the mark in place.
func importMarked(ctx context.Context, private privateState) bool {
	return marked(ctx, private, importMarkKey)
}

// takeImportMark reports whether this Read follows an import, and clears the mark.
func takeImportMark(ctx context.Context, req, resp privateState) (bool, diag.Diagnostics) {
	if req == nil || resp == nil {
		return false, nil
	}
	raw, diags := req.GetKey(ctx, importMarkKey)
	if diags.HasError() || len(raw) == 0 {
		return false, diags
	}
	diags.Append(resp.SetKey(ctx, importMarkKey, nil)...)
	return true, diags
}

// adoptImported checks that an imported runtime belongs to the provisioner it was imported through,
// and restores the arguments the provisioner recorded (name, environment, annotations; version and
// hibernated come with every refresh), so that generated configuration plans no change.
func adoptImported(ctx context.Context, m *runtimeModel, provisionerName string, res *provisioner.Resource) diag.Diagnostics {
	var diags diag.Diagnostics
	o := provisioner.NewRuntimeObservation(res.State)
	if o.Owner != "" && o.Owner != provisionerName {
		addAnotherProvisionersRuntime(&diags, res.ID, o.Owner, provisionerName, "")
		return diags
	}
	if o.Name != "" {
		m.Name = types.StringValue(o.Name)
	}
	if o.Environment != "" {
		m.Environment = types.StringValue(o.Environment)
	}
	if len(o.Annotations) > 0 {
		v, d := types.MapValueFrom(ctx, types.StringType, o.Annotations)
		diags.Append(d...)
		m.Annotations = v
	}
	return diags
}

// addAnotherProvisionersRuntime refuses the import through provisioner asked of runtime id, which
// provisioner owner of the set holds; where says why asked did not see it ("" when it did).
func addAnotherProvisionersRuntime(diags *diag.Diagnostics, id, owner, asked, where string) {
	diags.AddAttributeError(path.Root("provisioner_name"), "Runtime belongs to another provisioner",
		fmt.Sprintf("Runtime %s was allocated by provisioner %q, not %q%s. Importing it through %q would let this configuration "+
			"resize or free another pool's runtime. If it is meant to be managed here, import it as %q with "+
			"`provisioner_name = %q`.", id, owner, asked, where, asked, importID(owner, id), owner))
}

// heldElsewhere is, when an import through provisioner asked found no runtime at id, the name of
// another provisioner of the set that holds one there ("" for none): a Kubernetes runtime of another
// namespace (or cluster) than asked's is not seen by asked at all, and "not found" sent the user
// looking for a runtime that was there. It only reads (CheckResource), asking the others at once for
// elsewhereTimeout at most in all. The first owner found ends the questions, so an unreachable cluster
// in the set costs the import nothing when another provisioner holds the runtime, and elsewhereTimeout
// when none does (asked one after the other, each unreachable one cost that much again). With no
// owner, unanswered names those that could not say (`"k8s" (why)`), any of which may hold it: the
// "not found" error names them.
func (r *RuntimeResource) heldElsewhere(ctx context.Context, asked, id string, opts *provisioner.ResourceOptions) (owner string, unanswered []string) {
	probe, cancel := context.WithTimeout(ctx, elsewhereTimeout)
	defer cancel() // ends the questions still open when an owner is found
	type answer struct{ owner, unanswered string }
	names := r.client.Names()
	answers := make(chan answer, len(names)) // buffered: a question that ends after the return does not block
	asking := 0
	for _, name := range names {
		p := r.client.Set[name]
		if name == asked || !p.Supports(provisioner.ResourceTypeRuntime) {
			continue
		}
		asking++
		go func() {
			res, err := p.CheckResource(probe, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime}, opts)
			switch {
			case errors.Is(err, provisioner.ErrResourceNotFound):
				answers <- answer{}
				return
			case err != nil || res == nil:
				answers <- answer{unanswered: fmt.Sprintf("%q (%v)", name, err)}
				return
			}
			owner := provisioner.NewRuntimeObservation(res.State).Owner
			if owner == "" {
				owner = name
			}
			if owner == asked {
				owner = ""
			}
			answers <- answer{owner: owner}
		}()
	}
	for ; asking > 0; asking-- {
		a := <-answers
		if a.owner != "" {
			return a.owner, nil
		}
		if a.unanswered != "" {
			unanswered = append(unanswered, a.unanswered)
		}
	}
	slices.Sort(unanswered)
	return "", unanswered
}

// elsewhereTimeout bounds heldElsewhere's questions to the set's other provisioners.
const elsewhereTimeout = 30 * time.Second

// namedInstances serializes, within one Terraform command (the Client a Configure builds), the Create
// and Delete of named runtimes that share an ID, and remembers the IDs a Create of the command
// provisioned. Terraform may create and destroy two resource instances with one name in one apply:
// `create_before_destroy` (with `-replace`, `replace_triggered_by` or a taint) creates the new instance
// before it destroys the deposed one, and a new address for the name without a `moved` block creates
// one and destroys the other, in any order (usually the destroy first, which frees the runtime: then
// there is nothing to keep). The name is the ID, so a Create that comes first adopts the runtime the
// other instance holds; the Delete that follows would then deprovision the runtime the new instance
// has in state (planned for re-creation on the next plan, its host given away meanwhile). The
// provider sees neither a deposed object nor the other address, only the ID; within one command,
// though, a Delete of an ID a Create provisioned is always of that other instance, as Terraform
// never creates and destroys one instance in one apply. Unnamed runtimes have random IDs and need none
// of this.
type namedInstances struct {
	mu    sync.Mutex
	locks map[string]chan struct{} // one token per ID: held while a Create or Delete of it runs
	// provisioned holds the IDs a Create of this command provisioned (and keeps in state).
	provisioned syncSet
	// inState holds the IDs of the named runtimes this command's state holds, as its refresh found
	// them (warnIfAdopting).
	inState syncSet
}

// hold locks id against the Create or Delete of another instance of the same runtime in this command;
// the caller must call the returned unlock. Waiting for the other one is bounded by ctx (the
// operation's timeout), and its error says what it waited for.
func (n *namedInstances) hold(ctx context.Context, id string) (unlock func(), err error) {
	n.mu.Lock()
	if n.locks == nil {
		n.locks = map[string]chan struct{}{}
	}
	l := n.locks[id]
	if l == nil {
		l = make(chan struct{}, 1)
		n.locks[id] = l
	}
	n.mu.Unlock()
	select {
	case l <- struct{}{}: // free: no wait
		return func() { <-l }, nil
	default:
	}
	start := time.Now()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, waits.Ended(ctx, start, fmt.Sprintf("the create or destroy of another resource with runtime %s's name in this apply to finish", id))
	}
}

// keptForReplacement is the warning of a Delete that left a named runtime to the instance that a
// Create of the same apply gave the same name.
func keptForReplacement(provisionerName, id, name string) string {
	return fmt.Sprintf("Provisioner %q: runtime %s (name %q) was not deprovisioned, because this apply also created a runtime "+
		"with that name (create_before_destroy, or a new resource address for the name without a `moved` block), and that "+
		"resource now manages it. A named runtime's ID follows from its provisioner and name, so the two are one runtime: "+
		"it keeps its host and slots. To get a new runtime instead, replace it without create_before_destroy, or give it another name.",
		provisionerName, id, name)
}

// warnIfAdopting warns at plan time when a new named runtime is at its ID already (a provisioner that
// can tell by reads whose cost does not grow with the plan: provisioner.ExistenceChecker; the static
// pool reads one ledger row, the kubernetes provisioner its shared snapshots), and reports whether it
// is. Its apply adopts that runtime instead of making one, which is what recovers a runtime that an
// interrupted apply, `terraform state rm` or a `removed` block left; but when another state manages
// it (another workspace with the same configuration, another configuration with the same name) both
// then manage one runtime, and the destroy of the state that adopted it last frees it for both (the
// other's is provisioner.ErrTakenOver), and the plan is the only place
// to say so. It only reads; in an apply walk (whose plans the plan walk showed) it reads nothing.
//
// A runtime at the ID that this state holds (its refresh found it: named.ours) is this state's own,
// replaced: a taint (by hand, or of a create that did not become ready) plans the new instance
// without a prior state. That is no adoption of another state's runtime, and needs no room either
// (create_before_destroy adopts it; otherwise its destroy frees its slots first): it reports true
// without a warning. The provider sees no addresses, so a second resource of this configuration with
// the same name goes unwarned too; the apply walk, which refreshes nothing, may warn of either.
func warnIfAdopting(ctx context.Context, reads *capacityReads, named *namedInstances, p provisioner.Provisioner, provisionerName, name string, diags *diag.Diagnostics) bool {
	ec, ok := p.(provisioner.ExistenceChecker)
	if !ok || reads.inApply.Load() {
		return false
	}
	id := provisioner.NamedResourceID(provisionerName, name)
	if named.inState.has(id) {
		return true
	}
	if reads.untold.has(provisionerName) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, PlanCheckTimeout)
	defer cancel()
	where, err := ec.ResourceExists(ctx, &provisioner.Resource{ID: id, Type: provisioner.ResourceTypeRuntime})
	if err != nil {
		if !errors.Is(err, provisioner.ErrResourceNotFound) {
			// Not asked again in this command: Terraform plans -parallelism resources at a time, and
			// each wave would wait up to PlanCheckTimeout again for a cluster or ledger that does
			// not answer, for advice, with nothing shown above the debug log.
			reads.untold.add(provisionerName)
			tflog.Debug(ctx, "plan-time check of a named runtime's ID skipped, and the provisioner's other checks in this command: it could not tell", map[string]any{"provisioner": provisionerName, "error": err.Error()})
		}
		return false
	}
	diags.AddAttributeWarning(path.Root("name"), "Named runtime exists already: the apply adopts it",
		fmt.Sprintf("Provisioner %q holds runtime %s, named %q, %s already. The apply adopts it instead of "+
			"making another: that is how a runtime that an interrupted apply, `terraform state rm` or a `removed` block left is taken back.\n\n"+
			"If another state manages it (another workspace of this configuration, or another configuration that uses the name), both states "+
			"then manage one runtime, and the destroy of the state whose apply adopted it last frees it for both "+
			"(the other's destroy leaves it). Give each workspace its own names, for example "+
			"`name = \"${terraform.workspace}-%s\"`. (When this replaces the runtime itself, as a taint planned with -refresh=false or the apply of a create_before_destroy replacement does, it is this runtime: nothing to do.)",
			provisionerName, id, name, where, name))
	return true
}
