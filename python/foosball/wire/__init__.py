"""The agents' wire protocol: catalogue, authenticated CBOR codec, transports, endpoint."""
