"""HTTP plumbing shared by every client and server of kubesched: total deadlines and size caps of
outbound requests (:mod:`kubesched.net.deadline`) and connection limits of listeners
(:mod:`kubesched.net.listener`)."""
