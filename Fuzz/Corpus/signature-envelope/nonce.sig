{
  "signature": "uPiBa1RDqF/LbAnpOMYMUHx8Tva+uhhDibRtD8yT4E1+SOaCfo9gY8n8YH6+vK8KMSLV8KZyeFK3jI2uXvypAw==",
  "intermediate": "3FAlwN427bU0VlZvxTT0Dr6uUnREPQgxFLPO47vWQh0AAAGphASuANHEsGR6CRU3u0RUZ6u9AarPySPL4focqK2rjge964AGY8HYJ/UrIIEpKaFJokfUCloP+I0GEF3HfgaTjGGJBAw=",
  "nonce": "ABEiM0RVZneImaq7zN3u/w==",
  "scopeHash": "ntij81SMCplZWI9h9t9kVqUqDfjfk9U7QAKq925A/Xo="
}
