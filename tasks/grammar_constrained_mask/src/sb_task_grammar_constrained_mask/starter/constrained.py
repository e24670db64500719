class ConstrainedDecoder:
    def __init__(self, automaton, vocab, eos_id, max_tokens):
        raise NotImplementedError

    def allowed(self):
        raise NotImplementedError

    def advance(self, token_id):
        raise NotImplementedError
