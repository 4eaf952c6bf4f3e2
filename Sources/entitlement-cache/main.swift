print("entitlement-cache: not yet")
