{
  description = "scratchbench: can a model actually implement it? (dev shell: nix develop, then sb run)";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [ pkgs.python311 pkgs.gnumake pkgs.git ]
            ++ pkgs.lib.optionals pkgs.stdenv.isLinux [ pkgs.bubblewrap ];
          # Everything Python comes from the lock into .venv, exactly as outside Nix:
          # tools/install.sh syncs .venv to locks/laptop.txt with --require-hashes (the CPU
          # torch wheel included) and never resolves afresh, so `sb run` grades with the
          # same files everywhere. Nix's python311 only hosts the venv.
          shellHook = ''
            bash tools/install.sh
            source .venv/bin/activate
          '';
        };
      });
    };
}
