{
  # A stand-in for nixpkgs holding only what scratchbench's flake evaluates. CI cannot
  # download nixpkgs, so `nix flake check --offline --override-input nixpkgs path:...`
  # evaluates our flake against this: it proves the flake's structure, not the packages.
  description = "stub nixpkgs for offline flake checks";

  outputs = { self }:
    let
      lib = {
        genAttrs = names: f: builtins.listToAttrs (map (name: { inherit name; value = f name; }) names);
        optionals = cond: xs: if cond then xs else [ ];
      };
      stub = system: name: derivation {
        inherit system name;
        builder = "/bin/sh";
        args = [ "-c" "echo stub > $out" ];
      };
      pkgsFor = system: {
        inherit lib;
        stdenv.isLinux = builtins.match ".*-linux" system != null;
        python311 = stub system "python3.11";
        gnumake = stub system "gnumake";
        git = stub system "git";
        bubblewrap = stub system "bubblewrap";
        mkShell = attrs: derivation {
          inherit system;
          name = "scratchbench-shell";
          builder = "/bin/sh";
          args = [ "-c" "echo shell > $out" ];
          packages = attrs.packages or [ ];
          shellHook = attrs.shellHook or "";
        };
      };
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ] pkgsFor;
    };
}
