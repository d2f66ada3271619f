"""greeter: a Greeting custom resource gets a ConfigMap with its message (the fakeapi example project)."""
