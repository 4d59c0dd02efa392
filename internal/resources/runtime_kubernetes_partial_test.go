package resources_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Provision that fails part-way leaves nothing behind: with a ResourceQuota that allows no Service,
// the claim and the Deployment are applied and the Service is refused; Create then deprovisions what
// was applied, the runtime is not in state, and no object of the provisioner is left in the namespace.
func TestAccRuntimeKubernetes_provisionFailingPartWayLeavesNothing(t *testing.T) {
	e := newKubeEnv(t)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-services"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: k8sresource.MustParse("0")}},
	}
	if _, err := e.core.ResourceQuotas(e.ns).Create(e.ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the quota: %v", err)
	}
	resource.Test(t, e.testCase(
		resource.TestStep{
			Config: e.providerConfig("") + runtimeBlock("rt", 1),
			// The error names the Service, which is applied after the claim and the Deployment.
			ExpectError: regexp.MustCompile(`Provisioning the runtime failed(.|\n)*applying\s+Service(.|\n)*forbidden`),
		},
		resource.TestStep{
			Config: e.providerConfig(""),
			Check: func(s *terraform.State) error {
				if len(s.RootModule().Resources) != 0 {
					t.Errorf("the failed runtime is in state: %v", s.RootModule().Resources)
				}
				return e.checkNoObjectLeft()(s)
			},
		},
	))
}
